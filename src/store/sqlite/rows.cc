#include "store/sqlite/rows.h"

namespace warden::sqlite {

const char* const kJobColumns =
    "id, queue, task, command, payload, priority, state, attempt, charged, crashes, "
    "max_attempts, max_crashes, retry, delivery, timeout_ms, lease_ms, unique_key, "
    "concurrency_key, worker_id, lease_token, lease_expires_at, run_at, start_deadline_at, "
    "created_at, started_at, finished_at, checkpoint, result, last_error, active_lease_ms, "
    "avoid_node, avoid_until";

std::string JobExtraColumns(const std::string& job) {
  return "(SELECT w.name FROM workers w WHERE w.id = " + job + ".worker_id), " +
         LastErrorMessageSql(job);
}

std::string LastErrorMessageSql(const std::string& job) {
  // The message comes from the latest failed attempt; a job cancelled while
  // it waited has no attempt of that kind, and the earlier failure's message
  // would not be about the cancel.
  return "(SELECT CASE WHEN " + job + ".last_error = 'cancelled' AND a.outcome <> 'cancelled' " +
         "THEN NULL ELSE a.error_message END FROM attempts a WHERE a.job_id = " + job +
         ".id AND a.outcome NOT IN ('running', 'succeeded') ORDER BY a.attempt DESC LIMIT 1)";
}

const char* const kWorkerColumns =
    "w.id, w.name, w.node, w.pid, w.version, w.queues, w.concurrency, w.state, "
    "w.started_at, w.last_heartbeat, w.stopped_at, w.death_reason, "
    "(SELECT count(*) FROM jobs j WHERE j.worker_id = w.id AND j.state = 'running'), "
    "w.tasks, w.allow_commands, w.keepalive_ms";

}  // namespace warden::sqlite
