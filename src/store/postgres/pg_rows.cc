#include "store/postgres/pg_rows.h"

namespace warden::pg {

namespace {

// Row `row` of a result as a ColumnReader (store/row_decode.h). Inline
// forwarding only: the decoders call Rows as directly as before.
class RowAt {
 public:
  RowAt(const Rows& rows, int row) : rows_(rows), row_(row) {}
  int64_t Int(int col) const { return rows_.Int(row_, col); }
  std::optional<int64_t> OptInt(int col) const { return rows_.OptInt(row_, col); }
  std::string Text(int col) const { return rows_.Text(row_, col); }
  bool IsNull(int col) const { return rows_.IsNull(row_, col); }
  bool Bool(int col) const { return rows_.Bool(row_, col); }

 private:
  const Rows& rows_;
  const int row_;
};

}  // namespace

// Qualified with `j`: statements alias warden.jobs as j, and UPDATE ... FROM
// joins would otherwise make names like `id` ambiguous.
const char* const kJobColumns =
    "j.id, j.queue, j.task, j.command, j.payload, j.priority, j.state, j.attempt, j.charged, "
    "j.crashes, j.max_attempts, j.max_crashes, j.retry, j.delivery, j.timeout_ms, j.lease_ms, "
    "j.unique_key, j.concurrency_key, j.worker_id, j.lease_token, j.lease_expires_at, j.run_at, "
    "j.start_deadline_at, j.created_at, j.started_at, j.finished_at, j.checkpoint, j.result, "
    "j.last_error, j.active_lease_ms, j.avoid_node, j.avoid_until";

JobInfo JobFromRow(const Rows& r, int i) { return JobFromColumns(RowAt(r, i)); }

std::string JobExtraColumns(const std::string& job) {
  return "(SELECT w.name FROM warden.workers w WHERE w.id = " + job + ".worker_id), " +
         LastErrorMessageSql(job);
}

std::string LastErrorMessageSql(const std::string& job) {
  // As on SQLite (store/sqlite/rows.cc): the latest failed attempt's
  // message, unless the job was cancelled after it, while it waited.
  return "(SELECT CASE WHEN " + job + ".last_error = 'cancelled' AND a.outcome <> 'cancelled' " +
         "THEN NULL ELSE a.error_message END FROM warden.attempts a WHERE a.job_id = " + job +
         ".id AND a.outcome NOT IN ('running', 'succeeded') ORDER BY a.attempt DESC LIMIT 1)";
}

void JobExtrasFromRow(const Rows& r, int row, int first, JobInfo* j) {
  JobExtrasFromColumns(RowAt(r, row), first, j);
}

const char* const kWorkerColumns =
    "w.id, w.name, w.node, w.pid, w.version, w.queues, w.concurrency, w.state, "
    "w.started_at, w.last_heartbeat, w.stopped_at, w.death_reason, "
    "(SELECT count(*) FROM warden.jobs j WHERE j.worker_id = w.id AND j.state = 'running'), "
    "w.tasks, w.allow_commands, w.keepalive_ms";

WorkerInfo WorkerFromRow(const Rows& r, int i) { return WorkerFromColumns(RowAt(r, i)); }
AttemptInfo AttemptFromRow(const Rows& r, int i) { return AttemptFromColumns(RowAt(r, i)); }
ClaimerElsewhere ClaimerElsewhereFromRow(const Rows& r, int i) {
  return ClaimerElsewhereFromColumns(RowAt(r, i));
}

}  // namespace warden::pg
