// Inserting one job: shared by SqliteStore and by enqueueing inside an
// application's own SQLite transaction (warden/sqlite.h).
#pragma once

#include <span>
#include <vector>

#include "store/sqlite/sqlite_db.h"
#include "warden/job.h"

namespace warden::sqlite {

// REQUIRES: an open write transaction on `db`. A live job with the same
// unique key makes this a no-op that returns that job's id.
Result<EnqueueResult> InsertJob(Db& db, const JobSpec& spec, TimeMs now);

// InsertJob for each spec, in order, several rows to a statement where
// they have no unique key.
Result<std::vector<EnqueueResult>> InsertJobs(Db& db, std::span<const JobSpec> specs,
                                              TimeMs now);

}  // namespace warden::sqlite
