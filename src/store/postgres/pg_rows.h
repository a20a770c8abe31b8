// Row <-> struct mapping for the PostgreSQL backend: its column lists; the
// decoding is store/row_decode.h's, shared with SQLite (store/sqlite/rows.h).
#pragma once

#include <string>

#include "store/postgres/pg_conn.h"
#include "store/row_decode.h"
#include "warden/job.h"

namespace warden::pg {

// Columns of warden.jobs in JobFromRow's order (for SELECT / RETURNING),
// kJobColumnCount of them.
extern const char* const kJobColumns;
JobInfo JobFromRow(const Rows& r, int row);
// What a person reading a job wants beside its row: its worker's name and
// its last error's message. Columns for a SELECT from warden.jobs aliased
// `job`; JobExtrasFromRow reads them, starting at column `first`.
std::string JobExtraColumns(const std::string& job);
// The second of those: the last error's message (NULL: none).
std::string LastErrorMessageSql(const std::string& job);
void JobExtrasFromRow(const Rows& r, int row, int first, JobInfo* j);

// Columns of warden.workers aliased `w`, plus its running-job count.
extern const char* const kWorkerColumns;
WorkerInfo WorkerFromRow(const Rows& r, int row);
// PgStore::NodeToAvoidLocked's rows (store/row_decode.h).
ClaimerElsewhere ClaimerElsewhereFromRow(const Rows& r, int row);
// An attempts row as AttemptsLocked selects it (AttemptFromColumns).
AttemptInfo AttemptFromRow(const Rows& r, int row);

}  // namespace warden::pg
