// Mapping between job/worker rows and the public structs: the SQLite
// column lists; the decoding is store/row_decode.h's, shared with
// PostgreSQL.
#pragma once

#include <string>

#include "store/row_decode.h"
#include "store/sqlite/sqlite_db.h"
#include "warden/job.h"

namespace warden::sqlite {

// A Stmt is itself a ColumnReader (store/row_decode.h): the readers below
// forward to the shared decoders inline, so a caller calls the decoder
// directly, as it called the hand-written copy this replaced.

// SELECT list for JobFromRow, in its order (kJobColumnCount columns).
extern const char* const kJobColumns;
inline JobInfo JobFromRow(const Stmt& s) { return JobFromColumns(s); }
// What a person reading a job wants beside its row: its worker's name and
// its last error's message. Columns for a SELECT from jobs aliased `job`;
// JobExtrasFromRow reads them, starting at column `first`.
std::string JobExtraColumns(const std::string& job);
// The second of those: the last error's message (NULL: none).
std::string LastErrorMessageSql(const std::string& job);
inline void JobExtrasFromRow(const Stmt& s, int first, JobInfo* j) {
  JobExtrasFromColumns(s, first, j);
}

extern const char* const kWorkerColumns;
inline WorkerInfo WorkerFromRow(const Stmt& s) { return WorkerFromColumns(s); }

}  // namespace warden::sqlite
