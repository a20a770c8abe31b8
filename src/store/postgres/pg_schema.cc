#include "store/postgres/pg_schema.h"

#include <string>
#include <vector>

#include "store/migrations.h"

namespace warden::pg {
namespace {

// The migrations, checked once (src/store/migrations.h).
const Result<std::vector<Migration>>& Migrations() {
  static const Result<std::vector<Migration>> migrations =
      NumberedMigrations(PostgresMigrationFiles(), kSchemaVersion);
  return migrations;
}

// pg_advisory_xact_lock(kLockClass, kMigrationLock) serialises migrations
// of hosts that start at once.
constexpr int kMigrationLock = 0;

}  // namespace

Result<int> ReadSchemaVersion(Conn& conn) {
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn.Exec("SELECT CASE WHEN to_regclass('warden.schema_version') IS NULL THEN 0 "
                        "ELSE (SELECT coalesce(max(version), 0) FROM warden.schema_version) END"));
  return static_cast<int>(r.Int(0, 0));
}

Status Migrate(Conn& conn) {
  static_assert(kSchemaVersion >= 1);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(conn));
  WARDEN_RETURN_IF_ERROR(conn.Exec("SELECT pg_advisory_xact_lock($1::int, $2::int)",
                                   Params().Add(kLockClass).Add(kMigrationLock))
                             .status());
  WARDEN_RETURN_IF_ERROR(conn.ExecScript(
      "CREATE SCHEMA IF NOT EXISTS warden; "
      "CREATE TABLE IF NOT EXISTS warden.schema_version (version integer PRIMARY KEY, "
      "applied_at timestamptz NOT NULL DEFAULT now())"));
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn.Exec("SELECT coalesce(max(version), 0) FROM warden.schema_version"));
  const int version = static_cast<int>(r.Int(0, 0));
  if (version > kSchemaVersion) {
    return FailedPrecondition("the database has schema version " + std::to_string(version) +
                              ", newer than this warden knows (" +
                              std::to_string(kSchemaVersion) + "): upgrade warden");
  }
  WARDEN_RETURN_IF_ERROR(Migrations().status());
  for (const Migration& m : *Migrations()) {
    if (m.version <= version) continue;
    WARDEN_RETURN_IF_ERROR(
        conn.ExecScript(std::string(m.sql)).Annotate("migration " + std::string(m.name)));
    WARDEN_RETURN_IF_ERROR(
        conn.Exec("INSERT INTO warden.schema_version (version) VALUES ($1::int)",
                  Params().Add(m.version))
            .status());
  }
  return tx->Commit();
}

}  // namespace warden::pg
