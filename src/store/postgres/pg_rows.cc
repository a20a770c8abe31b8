#include "store/postgres/pg_rows.h"

#include "core/json_text.h"
#include "core/lists.h"

namespace warden::pg {

// Qualified with `j`: statements alias warden.jobs as j, and UPDATE ... FROM
// joins would otherwise make names like `id` ambiguous.
const char* const kJobColumns =
    "j.id, j.queue, j.task, j.command, j.payload, j.priority, j.state, j.attempt, j.charged, "
    "j.crashes, j.max_attempts, j.max_crashes, j.retry, j.delivery, j.timeout_ms, j.lease_ms, "
    "j.unique_key, j.concurrency_key, j.worker_id, j.lease_token, j.lease_expires_at, j.run_at, "
    "j.start_deadline_at, j.created_at, j.started_at, j.finished_at, j.checkpoint, j.result, "
    "j.last_error, j.active_lease_ms";

JobInfo JobFromRow(const Rows& r, int i) {
  JobInfo j;
  j.id = r.Int(i, 0);
  j.queue = r.Text(i, 1);
  j.task = r.Text(i, 2);
  j.command = r.Text(i, 3);
  j.payload = ParseStoredJson(r.Text(i, 4));
  j.priority = static_cast<int>(r.Int(i, 5));
  j.state = ParseJobState(r.Text(i, 6)).value_or(JobState::kDead);
  j.attempt = static_cast<int>(r.Int(i, 7));
  j.charged = static_cast<int>(r.Int(i, 8));
  j.crashes = static_cast<int>(r.Int(i, 9));
  j.max_attempts = static_cast<int>(r.Int(i, 10));
  j.max_crashes = static_cast<int>(r.Int(i, 11));
  j.retry = ParseRetryPolicy(r.Text(i, 12)).value_or(RetryPolicy::kDefault);
  j.delivery = ParseDelivery(r.Text(i, 13)).value_or(Delivery::kAtLeastOnce);
  j.timeout = Millis(r.Int(i, 14));
  if (auto l = r.OptInt(i, 15)) j.lease = Millis(*l);
  j.unique_key = r.Text(i, 16);
  j.concurrency_key = r.Text(i, 17);
  j.worker = r.OptInt(i, 18);
  j.lease_token = r.Int(i, 19);
  j.lease_expires_at = r.OptInt(i, 20);
  j.run_at = r.Int(i, 21);
  j.start_deadline_at = r.OptInt(i, 22);
  j.created_at = r.Int(i, 23);
  j.started_at = r.OptInt(i, 24);
  j.finished_at = r.OptInt(i, 25);
  j.checkpoint = ParseStoredJson(r.Text(i, 26));
  j.result = ParseStoredJson(r.Text(i, 27));
  if (!r.IsNull(i, 28)) j.last_error = ParseErrorKind(r.Text(i, 28));
  // A running job's effective lease (per-job or the claiming worker's).
  if (auto l = r.OptInt(i, 29)) j.lease = Millis(*l);
  return j;
}

std::string JobExtraColumns(const std::string& job) {
  // As on SQLite (store/sqlite/rows.cc): the latest failed attempt's
  // message, unless the job was cancelled after it, while it waited.
  return "(SELECT w.name FROM warden.workers w WHERE w.id = " + job + ".worker_id), " +
         "(SELECT CASE WHEN " + job + ".last_error = 'cancelled' AND a.outcome <> 'cancelled' " +
         "THEN NULL ELSE a.error_message END FROM warden.attempts a WHERE a.job_id = " + job +
         ".id AND a.outcome NOT IN ('running', 'succeeded') ORDER BY a.attempt DESC LIMIT 1)";
}

void JobExtrasFromRow(const Rows& r, int row, int first, JobInfo* j) {
  j->worker_name = r.Text(row, first);
  if (j->last_error) j->last_error_message = r.Text(row, first + 1);
}

const char* const kWorkerColumns =
    "w.id, w.name, w.node, w.pid, w.version, w.queues, w.concurrency, w.state, "
    "w.started_at, w.last_heartbeat, w.stopped_at, w.death_reason, "
    "(SELECT count(*) FROM warden.jobs j WHERE j.worker_id = w.id AND j.state = 'running'), "
    "w.tasks, w.allow_commands";

WorkerInfo WorkerFromRow(const Rows& r, int i) {
  WorkerInfo w;
  w.id = r.Int(i, 0);
  w.name = r.Text(i, 1);
  w.node = r.Text(i, 2);
  w.pid = static_cast<int>(r.Int(i, 3));
  w.version = r.Text(i, 4);
  w.queues = SplitList(r.Text(i, 5));
  w.concurrency = static_cast<int>(r.Int(i, 6));
  w.state = ParseWorkerState(r.Text(i, 7)).value_or(WorkerState::kDead);
  w.started_at = r.Int(i, 8);
  w.last_heartbeat = r.Int(i, 9);
  w.stopped_at = r.OptInt(i, 10);
  w.death_reason = r.Text(i, 11);
  w.running = static_cast<int>(r.Int(i, 12));
  w.tasks = SplitList(r.Text(i, 13));
  w.allow_commands = r.Bool(i, 14);
  return w;
}

}  // namespace warden::pg
