// The SQLite schema: numbered, forward-only migrations. A database whose
// version is newer than this binary knows is refused, never touched.
#pragma once

#include "store/sqlite/sqlite_db.h"

namespace warden::sqlite {

constexpr int kSchemaVersion = 17;

// Reads only, before anything may write to the file: refuses (and so leaves
// untouched) a file that is not a database, a newer warden schema, and
// another application's database that has tables or indexes named like
// warden's. Another application's database without such names is fine:
// warden adds its tables beside the application's (see warden/sqlite.h).
Status CheckBeforeUse(Db& db);
// Applies the missing migrations in one IMMEDIATE transaction, so several
// processes starting at once on a fresh file migrate it exactly once. A
// current schema is only read: no write lock, so opening works while
// another process holds it, and on a read-only file.
Status Migrate(Db& db);
Result<int> ReadSchemaVersion(Db& db);

}  // namespace warden::sqlite
