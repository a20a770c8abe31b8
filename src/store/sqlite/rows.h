// Mapping between job/worker rows and the public structs.
#pragma once

#include <string>

#include "core/json_text.h"
#include "core/lists.h"
#include "store/sqlite/sqlite_db.h"
#include "warden/job.h"

namespace warden::sqlite {

// SELECT list for JobFromRow, in its order.
extern const char* const kJobColumns;
// How many columns kJobColumns has: a query's further columns start here.
constexpr int kJobColumnCount = 30;
JobInfo JobFromRow(const Stmt& s);

extern const char* const kWorkerColumns;
WorkerInfo WorkerFromRow(const Stmt& s);

}  // namespace warden::sqlite
