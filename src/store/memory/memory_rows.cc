#include "store/memory/memory_rows.h"

#include "warden/lists.h"
#include "warden/text.h"

namespace warden::memory {

bool IsLive(JobState state) {
  return state == JobState::kScheduled || state == JobState::kAvailable ||
         state == JobState::kRunning || state == JobState::kRetryable;
}

bool IsLive(WorkerState state) {
  return state == WorkerState::kActive || state == WorkerState::kDraining;
}

namespace {

// `job`, as it is now, counted in (+1) or out (-1).
void CountJob(Tables& t, const JobRow& job, int delta) {
  t.job_counts[{job.queue, JobStateName(job.state)}] += delta;
  const Tables::GroupKey group{job.queue, job.task, !job.command.empty(), job.state};
  t.group_counts[group] += delta;
  if (job.state == JobState::kScheduled || job.state == JobState::kRetryable) {
    auto& due = t.due_by_group[group];
    if (delta > 0) {
      due.emplace(job.run_at, job.id);
    } else {
      due.erase({job.run_at, job.id});
    }
  }
  if (job.state != JobState::kAvailable) return;
  auto& queue = t.available_by_run_at[job.queue];
  if (delta > 0) {
    queue.emplace(job.run_at, job.id);
  } else {
    queue.erase({job.run_at, job.id});
  }
}

}  // namespace

void AddJobRow(Tables& t, JobRow row) {
  CountJob(t, row, +1);
  t.jobs.emplace(row.id, std::move(row));
}

std::map<JobId, JobRow>::iterator EraseJobRow(Tables& t, std::map<JobId, JobRow>::iterator it) {
  CountJob(t, it->second, -1);
  return t.jobs.erase(it);
}

void SetJobRunAt(Tables& t, JobRow& job, TimeMs run_at) {
  CountJob(t, job, -1);
  job.run_at = run_at;
  CountJob(t, job, +1);
}

void SetJobState(Tables& t, JobRow& job, JobState state) {
  const bool was_live = IsLive(job.state);
  CountJob(t, job, -1);
  job.state = state;
  CountJob(t, job, +1);
  if (job.unique_key.empty() || was_live == IsLive(state)) return;
  if (IsLive(state)) {
    t.live_unique[job.unique_key] = job.id;
  } else {
    t.live_unique.erase(job.unique_key);
  }
}

JobInfo ToJobInfo(const JobRow& r) {
  JobInfo j;
  j.id = r.id;
  j.queue = r.queue;
  j.task = r.task;
  j.command = r.command;
  j.payload = ParseStoredJson(r.payload);
  j.priority = r.priority;
  j.state = r.state;
  j.attempt = r.attempt;
  j.charged = r.charged;
  j.crashes = r.crashes;
  j.max_attempts = r.max_attempts;
  j.max_crashes = r.max_crashes;
  j.retry = r.retry;
  j.delivery = r.delivery;
  j.timeout = Millis(r.timeout_ms);
  // A running job's effective lease (per-job or the claiming worker's).
  if (r.active_lease_ms) {
    j.lease = Millis(*r.active_lease_ms);
  } else if (r.lease_ms) {
    j.lease = Millis(*r.lease_ms);
  }
  j.unique_key = r.unique_key;
  j.concurrency_key = r.concurrency_key;
  j.worker = r.worker_id;
  j.lease_token = r.lease_token;
  j.lease_expires_at = r.lease_expires_at;
  j.run_at = r.run_at;
  j.start_deadline_at = r.start_deadline_at;
  j.created_at = r.created_at;
  j.started_at = r.started_at;
  j.finished_at = r.finished_at;
  j.checkpoint = ParseStoredJson(r.checkpoint);
  j.result = ParseStoredJson(r.result);
  j.last_error = r.last_error;
  if (r.avoid_until) {
    j.avoid_node = r.avoid_node;
    j.avoid_node_until = r.avoid_until;
  }
  return j;
}

JobInfo ToJobInfoWithExtras(const Tables& t, const JobRow& r) {
  JobInfo j = ToJobInfo(r);
  if (r.worker_id) {
    if (auto w = t.workers.find(*r.worker_id); w != t.workers.end()) j.worker_name = w->second.name;
  }
  if (!j.last_error) return j;
  // The latest failed attempt's message; none for a job cancelled while it
  // waited, whose earlier failure's message would not be about the cancel.
  for (auto a = r.attempts.rbegin(); a != r.attempts.rend(); ++a) {
    if (a->outcome == "running" || a->outcome == "succeeded") continue;
    const bool cancelled_waiting =
        j.last_error == ErrorKind::kCancelled && a->outcome != ErrorKindName(ErrorKind::kCancelled);
    if (!cancelled_waiting) j.last_error_message = a->error_message;
    break;
  }
  return j;
}

AttemptInfo ToAttemptInfo(const Tables& t, const AttemptRow& r) {
  AttemptInfo a;
  a.attempt = r.attempt;
  a.worker = r.worker_id;
  a.lease_token = r.lease_token;
  a.claimed_at = r.claimed_at;
  a.started_at = r.started_at;
  a.finished_at = r.finished_at;
  a.outcome = r.outcome;
  if (auto kind = ParseErrorKind(r.outcome)) {
    AttemptError e;
    e.kind = *kind;
    e.message = r.error_message;
    e.exit_code = r.exit_code;
    e.signal = r.signal;
    e.stderr_tail = r.stderr_tail;
    e.stdout_tail = r.stdout_tail;
    a.error = e;
  } else {
    a.note = r.stderr_tail;
  }
  a.lost_by = r.lost_by;
  a.runnable_at = r.runnable_at;
  if (auto w = t.workers.find(r.worker_id); w != t.workers.end()) a.worker_name = w->second.name;
  return a;
}

WorkerInfo ToWorkerInfo(const WorkerRow& r, int running) {
  WorkerInfo w;
  w.id = r.id;
  w.name = r.name;
  w.node = r.node;
  w.pid = r.pid;
  w.version = r.version;
  w.queues = SplitList(r.queues);
  w.concurrency = r.concurrency;
  w.state = r.state;
  w.started_at = r.started_at;
  w.last_heartbeat = r.last_heartbeat;
  w.stopped_at = r.stopped_at;
  w.death_reason = r.death_reason;
  w.running = running;
  w.tasks = SplitList(r.tasks);
  w.allow_commands = r.allow_commands;
  w.keepalive = r.keepalive;
  return w;
}

void AppendAudit(Tables& t, AuditEntry entry, TimeMs now) {
  entry.id = t.audit.empty() ? 1 : t.audit.back().id + 1;
  entry.at = now;
  t.audit.push_back(std::move(entry));
}

JobActionInfo JobActionOn(const JobRow& job, TimeMs now, const char* action,
                          const std::string& actor, int64_t op, bool fresh) {
  JobActionInfo a;
  a.at = now;
  a.action = action;
  a.actor = actor;
  a.op = op;
  a.fresh = fresh;
  a.from = job.state;
  a.finished_at = job.finished_at;
  a.last_error = job.last_error;
  a.charged = job.charged;
  a.max_attempts = job.max_attempts;
  a.crashes = job.crashes;
  a.max_crashes = job.max_crashes;
  return a;
}

}  // namespace warden::memory
