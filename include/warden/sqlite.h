// Enqueue a job inside your application's own SQLite transaction, so the job
// exists if and only if your transaction commits.
//
//   sqlite3_exec(db, "BEGIN IMMEDIATE", ...);
//   ... your INSERTs ...
//   auto id = warden::EnqueueInSqliteTransaction(db, spec);
//   sqlite3_exec(db, "COMMIT", ...);
//
// `db` is your connection to the warden database file (open it once with
// warden::Client first so the schema exists). Workers see the job when you
// commit; since they cannot be woken before that, an idle worker starts it
// within its poll interval (1 s by default).
#pragma once

#include <sqlite3.h>

#include "warden/client.h"
#include "warden/job.h"
#include "warden/status.h"

namespace warden {

// `now`: the enqueue time, ms since the epoch (the store's clock on SQLite
// is the host's wall clock).
Result<EnqueueResult> EnqueueInSqliteTransaction(sqlite3* db, const JobSpec& spec,
                                                 TimeMs now);

}  // namespace warden
