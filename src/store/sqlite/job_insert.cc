#include "store/sqlite/job_insert.h"

#include "core/json_text.h"
#include "warden/sqlite.h"

namespace warden::sqlite {

Result<EnqueueResult> InsertJob(Db& db, const JobSpec& spec, TimeMs now) {
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
  const TimeMs run_at = now + spec.delay.count();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt ins,
      db.Prepare("INSERT INTO jobs (queue, task, command, payload, priority, state, run_at, "
                   "max_attempts, max_crashes, retry, delivery, timeout_ms, lease_ms, "
                   "start_deadline_at, unique_key, concurrency_key, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  ins.Bind(1, spec.queue)
      .Bind(2, spec.task)
      .Bind(3, spec.command)
      .Bind(4, JsonText(spec.payload))
      .Bind(5, spec.priority)
      .Bind(6, spec.delay.count() > 0 ? "scheduled" : "available")
      .Bind(7, run_at)
      .Bind(8, spec.max_attempts)
      .Bind(9, spec.max_crashes)
      .Bind(10, RetryPolicyName(spec.retry))
      .Bind(11, DeliveryName(spec.delivery))
      .Bind(12, static_cast<int64_t>(spec.timeout.count()))
      .Bind(13, spec.lease ? std::optional<int64_t>(spec.lease->count()) : std::nullopt)
      .Bind(14, spec.start_deadline
                    ? std::optional<int64_t>(run_at + spec.start_deadline->count())
                    : std::nullopt)
      .BindTextOrNull(15, spec.unique_key)
      .BindTextOrNull(16, spec.concurrency_key)
      .Bind(17, now);
  WARDEN_RETURN_IF_ERROR(ins.Exec().status());
  return EnqueueResult{sqlite3_last_insert_rowid(db.raw()), true};
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
