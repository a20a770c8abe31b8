// Row <-> struct mapping for the PostgreSQL backend. Column lists match the
// readers below; the SQLite backend has the same model (store/sqlite/rows.h).
#pragma once

#include <string>

#include "store/postgres/pg_conn.h"
#include "warden/job.h"

namespace warden::pg {

// Columns of warden.jobs in JobFromRow's order (for SELECT / RETURNING).
extern const char* const kJobColumns;
inline constexpr int kJobColumnCount = 30;
JobInfo JobFromRow(const Rows& r, int row);
// What a person reading a job wants beside its row: its worker's name and
// its last error's message. Columns for a SELECT from warden.jobs aliased
// `job`; JobExtrasFromRow reads them, starting at column `first`.
std::string JobExtraColumns(const std::string& job);
inline constexpr int kJobExtraColumnCount = 2;
void JobExtrasFromRow(const Rows& r, int row, int first, JobInfo* j);

// Columns of warden.workers aliased `w`, plus its running-job count.
extern const char* const kWorkerColumns;
WorkerInfo WorkerFromRow(const Rows& r, int row);

}  // namespace warden::pg
