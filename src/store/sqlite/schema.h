// The SQLite schema: numbered, forward-only migrations. A database whose
// version is newer than this binary knows is refused, never touched.
#pragma once

#include "store/sqlite/sqlite_db.h"

namespace warden::sqlite {

constexpr int kSchemaVersion = 1;

// Applies the missing migrations in one IMMEDIATE transaction, so several
// processes starting at once on a fresh file migrate it exactly once.
Status Migrate(Db& db);
Result<int> ReadSchemaVersion(Db& db);

}  // namespace warden::sqlite
