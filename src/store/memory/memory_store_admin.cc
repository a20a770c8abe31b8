// MemoryStore: reads and admin: get, list, retry, cancel, counts, next due, backlog.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/operator_rules.h"
#include "store/attempt_in_row.h"
#include "store/memory/memory_store.h"

namespace warden::memory {

Result<JobInfo> MemoryStore::JobGet(JobId id) {
  MutexLock lock(db_->mu);
  auto it = db_->t.jobs.find(id);
  if (it == db_->t.jobs.end()) return NotFound("no job with id " + std::to_string(id));
  const JobRow& row = it->second;
  JobInfo job = ToJobInfoWithExtras(db_->t, row);
  for (const AttemptRow& a : row.attempts) job.attempts.push_back(ToAttemptInfo(db_->t, a));
  AddAttemptInJobRow(job, row.attempt_started_at, &job.attempts);
  return job;
}

Result<std::vector<FencedWriteInfo>> MemoryStore::JobFencedWrites(JobId id) {
  MutexLock lock(db_->mu);
  std::vector<FencedWriteInfo> out;
  for (const FencedWrite& f : db_->t.fenced_writes) {
    if (f.job_id != id) continue;
    FencedWriteInfo info{f.at, f.worker_id, "", f.lease_token, f.what};
    if (auto w = db_->t.workers.find(f.worker_id); w != db_->t.workers.end()) {
      info.worker_name = w->second.name;
    }
    out.push_back(std::move(info));
  }
  return out;
}

Result<std::vector<JobInfo>> MemoryStore::JobList(const JobFilter& f, int64_t* total) {
  MutexLock lock(db_->mu);
  std::vector<JobInfo> out;
  int64_t matched = 0;
  // Newest first; SQLite's LIMIT: a negative limit is none.
  for (auto it = db_->t.jobs.rbegin(); it != db_->t.jobs.rend(); ++it) {
    const JobRow& job = it->second;
    if (!MatchesFilter(db_->t, job, f)) continue;
    ++matched;
    if (f.before_id > 0 && job.id >= f.before_id) continue;
    if (f.limit < 0 || static_cast<int64_t>(out.size()) < f.limit) {
      out.push_back(ToJobInfoWithExtras(db_->t, job));
    } else if (!total) {
      break;
    }
  }
  // As SQLite: the count is a column of the page's rows (no row, no
  // count), but past a cursor it is counted on its own.
  if (total) *total = out.empty() && f.before_id <= 0 ? 0 : matched;
  return out;
}


Result<std::vector<JobActionInfo>> MemoryStore::JobActions(JobId id) {
  MutexLock lock(db_->mu);
  auto it = db_->t.jobs.find(id);
  if (it == db_->t.jobs.end()) return std::vector<JobActionInfo>();
  return it->second.actions;
}

Status MemoryStore::JobRetry(JobId id, const RetryOptions& retry, const AuditEntry& audit) {
  MutexLock lock(db_->mu);
  const TimeMs now = clock_->NowMs();
  WARDEN_RETURN_IF_ERROR(RetryLocked(id, now, audit.actor, 0, retry.fresh));
  AuditEntry entry = audit;
  entry.count = 1;
  AppendAudit(db_->t, std::move(entry), now);
  return Status::Ok();
}

Status MemoryStore::RetryLocked(JobId id, TimeMs now, const std::string& actor, int64_t op,
                                bool fresh) {
  Tables& t = db_->t;
  auto it = t.jobs.find(id);
  if (it == t.jobs.end()) return NotFound("no job with id " + std::to_string(id));
  JobRow& job = it->second;
  WARDEN_RETURN_IF_ERROR(CheckRetryAllowed(id, job.state));
  if (!job.unique_key.empty()) {
    auto held = t.live_unique.find(job.unique_key);
    if (held != t.live_unique.end() && held->second != id) {
      return FailedPrecondition("job " + std::to_string(id) +
                                ": another live job holds its unique key");
    }
  }
  job.actions.push_back(JobActionOn(job, now, "retry", actor, op, fresh));
  SetJobRunAt(t, job, now);
  SetJobState(t, job, JobState::kAvailable);
  if (fresh) job.checkpoint.clear();
  job.charged = 0;
  job.crashes = 0;
  job.finished_at.reset();
  job.start_deadline_at.reset();
  return Status::Ok();
}

Status MemoryStore::JobRunNow(JobId id, const AuditEntry& audit) {
  MutexLock lock(db_->mu);
  const TimeMs now = clock_->NowMs();
  Tables& t = db_->t;
  auto it = t.jobs.find(id);
  if (it == t.jobs.end()) return NotFound("no job with id " + std::to_string(id));
  JobRow& job = it->second;
  WARDEN_RETURN_IF_ERROR(CheckRunNowAllowed(id, job.state));
  job.actions.push_back(JobActionOn(job, now, "run_now", audit.actor, 0, false));
  SetJobRunAt(t, job, now);
  SetJobState(t, job, JobState::kAvailable);
  AuditEntry entry = audit;
  entry.count = 1;
  AppendAudit(t, std::move(entry), now);
  return Status::Ok();
}

Result<JobState> MemoryStore::JobCancel(JobId id, const AuditEntry& audit) {
  MutexLock lock(db_->mu);
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(JobState state, CancelLocked(id, now, audit.actor, 0));
  AuditEntry entry = audit;
  entry.count = 1;
  AppendAudit(db_->t, std::move(entry), now);
  return state;
}

Result<JobState> MemoryStore::CancelLocked(JobId id, TimeMs now, const std::string& actor,
                                           int64_t op) {
  auto it = db_->t.jobs.find(id);
  if (it == db_->t.jobs.end()) return NotFound("no job with id " + std::to_string(id));
  JobRow& job = it->second;
  WARDEN_RETURN_IF_ERROR(CheckCancelAllowed(id, job.state));
  job.actions.push_back(JobActionOn(job, now, "cancel", actor, op, false));
  if (job.state == JobState::kRunning) {
    job.cancel_requested = true;  // its worker stops it
    return JobState::kRunning;
  }
  SetJobState(db_->t, job, JobState::kCancelled);
  job.finished_at = now;
  job.last_error = ErrorKind::kCancelled;
  return JobState::kCancelled;
}

Result<int64_t> MemoryStore::JobCountUnfinished() {
  MutexLock lock(db_->mu);
  int64_t n = 0;
  for (const auto& [key, count] : db_->t.job_counts) {
    n += IsLive(ParseJobState(key.second).value_or(JobState::kSucceeded)) ? count : 0;
  }
  return n;
}

Result<std::optional<Millis>> MemoryStore::JobNextDueIn() {
  MutexLock lock(db_->mu);
  std::optional<TimeMs> next;
  for (const auto& [id, job] : db_->t.jobs) {
    if (job.state != JobState::kScheduled && job.state != JobState::kRetryable) continue;
    if (!next || job.run_at < *next) next = job.run_at;
  }
  if (!next) return std::optional<Millis>();
  return std::optional<Millis>(Millis(std::max<int64_t>(0, *next - clock_->NowMs())));
}

// As SQLite's kBacklogSql: available groups, then scheduled and retryable
// ones, then running ones, each part in the order of its group's key; the
// waiting groups from the kept counts, the running ones from the jobs.
Result<std::vector<BacklogGroup>> MemoryStore::JobBacklog(const std::vector<std::string>& queues) {
  MutexLock lock(db_->mu);
  using Key = std::tuple<std::string, std::string, bool, std::string>;  // queue, task, cmd, state
  struct Group {
    int64_t count = 0;
    TimeMs next_run_at = 0;
  };
  auto wanted = [&](const std::string& queue) {
    return queues.empty() || std::find(queues.begin(), queues.end(), queue) != queues.end();
  };
  std::map<Key, Group> parts[3];
  for (const auto& [key, n] : db_->t.group_counts) {
    const auto& [queue, task, command, state] = key;
    if (n == 0 || !wanted(queue)) continue;
    const bool due_later = state == JobState::kScheduled || state == JobState::kRetryable;
    if (!due_later && state != JobState::kAvailable) continue;
    Group& g = parts[due_later ? 1 : 0][Key{queue, task, command, JobStateName(state)}];
    g.count = n;
    if (due_later) {
      auto due = db_->t.due_by_group.find(key);
      if (due != db_->t.due_by_group.end() && !due->second.empty()) {
        g.next_run_at = due->second.begin()->first;
      }
    }
  }
  for (const auto& [id, job] : db_->t.jobs) {
    if (job.state != JobState::kRunning || !job.worker_id || !wanted(job.queue)) continue;
    Group& g = parts[2][Key{job.queue, job.task, !job.command.empty(), JobStateName(job.state)}];
    g.next_run_at = g.count == 0 ? job.run_at : std::min(g.next_run_at, job.run_at);
    ++g.count;
  }
  std::vector<BacklogGroup> out;
  for (const auto& part : parts) {
    for (const auto& [key, g] : part) {
      BacklogGroup b;
      b.queue = std::get<0>(key);
      b.task = std::get<1>(key);
      b.command = std::get<2>(key);
      b.state = ParseJobState(std::get<3>(key)).value_or(JobState::kAvailable);
      b.count = g.count;
      b.next_run_at = g.next_run_at;
      out.push_back(std::move(b));
    }
  }
  return out;
}

}  // namespace warden::memory
