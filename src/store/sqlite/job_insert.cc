#include "store/sqlite/job_insert.h"

#include "core/first_run.h"
#include "store/sqlite/job_counts.h"
#include "warden/text.h"
#include "warden/sqlite.h"

namespace warden::sqlite {

namespace {

constexpr int kColumns = 17;
const char* const kInsertInto =
    "INSERT INTO jobs (queue, task, command, payload, priority, state, run_at, max_attempts, "
    "max_crashes, retry, delivery, timeout_ms, lease_ms, start_deadline_at, unique_key, "
    "concurrency_key, created_at) VALUES ";

// Jobs without a unique key go in this many to a statement: run once per
// row, an INSERT opened a cursor on the table and each of its indexes
// every time. Fewer rows are inserted one by one, so that a connection
// keeps two statements, not one per batch size.
constexpr size_t kRowsPerInsert = 32;

std::string InsertSql(size_t rows) {
  std::string row = "(?";
  for (int i = 1; i < kColumns; ++i) row += ", ?";
  row += ")";
  std::string sql = kInsertInto;
  for (size_t r = 0; r < rows; ++r) sql += (r ? ", " : "") + row;
  return sql;
}

// Binds one row's values from parameter `first`.
void BindJob(Stmt& ins, int first, const JobSpec& spec, TimeMs now) {
  const TimeMs run_at = FirstRunAt(spec, now);
  const int i = first - 1;
  ins.Bind(i + 1, spec.queue)
      .Bind(i + 2, spec.task)
      .Bind(i + 3, spec.command)
      .Bind(i + 4, JsonText(spec.payload))
      .Bind(i + 5, spec.priority)
      .Bind(i + 6, JobStateName(FirstState(spec, now)))
      .Bind(i + 7, run_at)
      .Bind(i + 8, spec.max_attempts)
      .Bind(i + 9, spec.max_crashes)
      .Bind(i + 10, RetryPolicyName(spec.retry))
      .Bind(i + 11, DeliveryName(spec.delivery))
      .Bind(i + 12, static_cast<int64_t>(spec.timeout.count()))
      .Bind(i + 13, spec.lease ? std::optional<int64_t>(spec.lease->count()) : std::nullopt)
      .Bind(i + 14, spec.start_deadline
                        ? std::optional<int64_t>(run_at + spec.start_deadline->count())
                        : std::nullopt)
      .BindTextOrNull(i + 15, spec.unique_key)
      .BindTextOrNull(i + 16, spec.concurrency_key)
      .Bind(i + 17, now);
}

// REQUIRES: no spec has a unique key.
Status InsertRows(Db& db, std::span<const JobSpec> specs, TimeMs now,
                  std::vector<EnqueueResult>* out, CountChanges* counts) {
  WARDEN_ASSIGN_OR_RETURN(Stmt ins, db.Prepare(InsertSql(specs.size())));
  for (size_t r = 0; r < specs.size(); ++r) {
    BindJob(ins, static_cast<int>(r) * kColumns + 1, specs[r], now);
  }
  WARDEN_RETURN_IF_ERROR(ins.Exec().status());
  // Under the write lock, an AUTOINCREMENT table numbers the rows of one
  // statement one after another (each is the largest id ever used + 1).
  const JobId last = sqlite3_last_insert_rowid(db.raw());
  const JobId first = last - static_cast<JobId>(specs.size()) + 1;
  for (size_t r = 0; r < specs.size(); ++r) {
    out->push_back(EnqueueResult{first + static_cast<JobId>(r), true});
    counts->Add(JobGroup{specs[r].queue, specs[r].task, !specs[r].command.empty()},
                FirstState(specs[r], now), 1);
  }
  return Status::Ok();
}

}  // namespace

namespace {

Result<EnqueueResult> InsertOne(Db& db, const JobSpec& spec, TimeMs now, CountChanges* counts) {
  if (!spec.unique_key.empty()) {
    WARDEN_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare("SELECT id FROM jobs WHERE unique_key = ? AND state IN "
                             "('scheduled', 'available', 'running', 'retryable')"));
    q.Bind(1, spec.unique_key);
    WARDEN_ASSIGN_OR_RETURN(bool found, q.Step());
    if (found) {
      EnqueueResult r{q.Int(0), false};
      q.Reset();
      return r;
    }
  }
  std::vector<EnqueueResult> out;
  WARDEN_RETURN_IF_ERROR(InsertRows(db, std::span(&spec, 1), now, &out, counts));
  return out[0];
}

}  // namespace

Result<EnqueueResult> InsertJob(Db& db, const JobSpec& spec, TimeMs now) {
  CountChanges counts;
  WARDEN_ASSIGN_OR_RETURN(EnqueueResult r, InsertOne(db, spec, now, &counts));
  WARDEN_RETURN_IF_ERROR(counts.Apply(db));
  return r;
}

Result<std::vector<EnqueueResult>> InsertJobs(Db& db, std::span<const JobSpec> specs,
                                              TimeMs now) {
  std::vector<EnqueueResult> out;
  out.reserve(specs.size());
  CountChanges counts;  // applied once, after every row
  size_t i = 0;
  while (i < specs.size()) {
    size_t n = 0;
    while (n < kRowsPerInsert && i + n < specs.size() && specs[i + n].unique_key.empty()) ++n;
    if (n == kRowsPerInsert) {
      WARDEN_RETURN_IF_ERROR(InsertRows(db, specs.subspan(i, n), now, &out, &counts));
      i += n;
    } else {
      // Fewer than a full statement's worth before the end or before a
      // unique key (whose check must see the rows inserted before it).
      WARDEN_ASSIGN_OR_RETURN(EnqueueResult r, InsertOne(db, specs[i], now, &counts));
      out.push_back(r);
      ++i;
    }
  }
  WARDEN_RETURN_IF_ERROR(counts.Apply(db));
  return out;
}

}  // namespace warden::sqlite

namespace warden {

Result<EnqueueResult> EnqueueInSqliteTransaction(sqlite3* db, const JobSpec& spec,
                                                 TimeMs now) {
  if (db == nullptr) return InvalidArgument("no SQLite connection");
  if (sqlite3_get_autocommit(db)) {
    return FailedPrecondition(
        "EnqueueInSqliteTransaction needs an open transaction on the connection "
        "(BEGIN IMMEDIATE first); use Client::Enqueue otherwise");
  }
  WARDEN_RETURN_IF_ERROR(ValidateSpec(spec));
  auto borrowed = sqlite::Db::Borrow(db);
  return sqlite::InsertJob(*borrowed, spec, now);
}

}  // namespace warden
