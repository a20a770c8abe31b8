#include "store/sqlite/rows.h"

namespace warden::sqlite {

const char* const kJobColumns =
    "id, queue, task, command, payload, priority, state, attempt, charged, crashes, "
    "max_attempts, max_crashes, retry, delivery, timeout_ms, lease_ms, unique_key, "
    "concurrency_key, worker_id, lease_token, lease_expires_at, run_at, start_deadline_at, "
    "created_at, started_at, finished_at, checkpoint, result, last_error, active_lease_ms";

JobInfo JobFromRow(const Stmt& s) {
  JobInfo j;
  j.id = s.Int(0);
  j.queue = s.Text(1);
  j.task = s.Text(2);
  j.command = s.Text(3);
  j.payload = ParseStoredJson(s.Text(4));
  j.priority = static_cast<int>(s.Int(5));
  j.state = ParseJobState(s.Text(6)).value_or(JobState::kDead);
  j.attempt = static_cast<int>(s.Int(7));
  j.charged = static_cast<int>(s.Int(8));
  j.crashes = static_cast<int>(s.Int(9));
  j.max_attempts = static_cast<int>(s.Int(10));
  j.max_crashes = static_cast<int>(s.Int(11));
  j.retry = ParseRetryPolicy(s.Text(12)).value_or(RetryPolicy::kDefault);
  j.delivery = ParseDelivery(s.Text(13)).value_or(Delivery::kAtLeastOnce);
  j.timeout = Millis(s.Int(14));
  if (auto l = s.OptInt(15)) j.lease = Millis(*l);
  j.unique_key = s.Text(16);
  j.concurrency_key = s.Text(17);
  j.worker = s.OptInt(18);
  j.lease_token = s.Int(19);
  j.lease_expires_at = s.OptInt(20);
  j.run_at = s.Int(21);
  j.start_deadline_at = s.OptInt(22);
  j.created_at = s.Int(23);
  j.started_at = s.OptInt(24);
  j.finished_at = s.OptInt(25);
  j.checkpoint = ParseStoredJson(s.Text(26));
  j.result = ParseStoredJson(s.Text(27));
  if (!s.IsNull(28)) j.last_error = ParseErrorKind(s.Text(28));
  // A running job's effective lease (per-job or the claiming worker's).
  if (auto l = s.OptInt(29)) j.lease = Millis(*l);
  return j;
}

std::string JobExtraColumns(const std::string& job) {
  // The message comes from the latest failed attempt; a job cancelled while
  // it waited has no attempt of that kind, and the earlier failure's message
  // would not be about the cancel.
  return "(SELECT w.name FROM workers w WHERE w.id = " + job + ".worker_id), " +
         "(SELECT CASE WHEN " + job + ".last_error = 'cancelled' AND a.outcome <> 'cancelled' " +
         "THEN NULL ELSE a.error_message END FROM attempts a WHERE a.job_id = " + job +
         ".id AND a.outcome NOT IN ('running', 'succeeded') ORDER BY a.attempt DESC LIMIT 1)";
}

void JobExtrasFromRow(const Stmt& s, int first, JobInfo* j) {
  j->worker_name = s.Text(first);
  if (j->last_error) j->last_error_message = s.Text(first + 1);
}

const char* const kWorkerColumns =
    "w.id, w.name, w.node, w.pid, w.version, w.queues, w.concurrency, w.state, "
    "w.started_at, w.last_heartbeat, w.stopped_at, w.death_reason, "
    "(SELECT count(*) FROM jobs j WHERE j.worker_id = w.id AND j.state = 'running'), "
    "w.tasks, w.allow_commands";

WorkerInfo WorkerFromRow(const Stmt& s) {
  WorkerInfo w;
  w.id = s.Int(0);
  w.name = s.Text(1);
  w.node = s.Text(2);
  w.pid = static_cast<int>(s.Int(3));
  w.version = s.Text(4);
  w.queues = SplitList(s.Text(5));
  w.concurrency = static_cast<int>(s.Int(6));
  w.state = ParseWorkerState(s.Text(7)).value_or(WorkerState::kDead);
  w.started_at = s.Int(8);
  w.last_heartbeat = s.Int(9);
  w.stopped_at = s.OptInt(10);
  w.death_reason = s.Text(11);
  w.running = static_cast<int>(s.Int(12));
  w.tasks = SplitList(s.Text(13));
  w.allow_commands = s.Int(14) != 0;
  return w;
}

}  // namespace warden::sqlite
