// The stores' migrations: frozen, numbered SQL files,
// src/store/migrations/{sqlite,postgres}/NNNN_what.sql, compiled into the
// binary (cmake/embed_files.cmake), applied in number order.
//
// A migration that has shipped never changes: a database migrated by it
// keeps what it did, so a fix is a new migration. SHA256SUMS beside the
// files holds each one's hash, and the `migrations_frozen` test fails when
// a listed file changes. tests/store/schema/ holds what each backend's
// schema looks like once migrated, and SchemaDumpTest compares a new
// database and one migrated from version 1 with it, so that a change to
// the schema shows in review as a change to that dump.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "warden/status.h"

namespace warden {

struct MigrationFile {
  std::string_view name;   // "0001_initial.sql"
  std::string_view bytes;  // its SQL
};

// Defined in the generated migrations_sqlite.cc and migrations_postgres.cc
// (the second only in a build with PostgreSQL).
std::span<const MigrationFile> SqliteMigrationFiles();
std::span<const MigrationFile> PostgresMigrationFiles();

struct Migration {
  int version = 0;  // from the name's number
  std::string_view name;
  std::string_view sql;
};

// The files in version order, checked: each name is NNNN_what.sql and the
// numbers run 1, 2, 3, ... with no gap or repeat. `want`: the schema
// version the code was written for; a different count is an error too.
Result<std::vector<Migration>> NumberedMigrations(std::span<const MigrationFile> files, int want);

}  // namespace warden
