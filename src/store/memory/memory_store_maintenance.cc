// MemoryStore: the leader lease, leases and their rescue, expiry, promotion, pruning, stats.
#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "store/memory/memory_store.h"
#include "warden/duration.h"

namespace warden::memory {

std::optional<LeaderRow> MemoryStore::LeaderReadLocked(const std::string& name) {
  auto it = db_->t.leaders.find(name);
  if (it == db_->t.leaders.end()) return std::nullopt;
  const LeaderEntry& l = it->second;
  auto holder = db_->t.workers.find(l.holder);
  const bool live = holder != db_->t.workers.end() && IsLive(holder->second.state);
  return LeaderRow{l.holder, l.expires_at, Millis(l.ttl_ms), live};
}

Result<std::optional<LeaderRow>> MemoryStore::LeaderRead(const std::string& name) {
  MutexLock lock(db_->mu);
  return LeaderReadLocked(name);
}

Result<bool> MemoryStore::LeaderTryAcquire(const std::string& name, WorkerId holder, Millis ttl,
                                           const std::optional<LeaderRow>& silent) {
  MutexLock lock(db_->mu);
  const std::optional<LeaderRow> seen = LeaderReadLocked(name);
  const bool possible =
      !seen || seen->holder == holder || !seen->holder_live ||
      (silent && silent->holder == seen->holder && silent->expires_at == seen->expires_at);
  if (!possible) return false;
  db_->t.leaders[name] = LeaderEntry{holder, clock_->NowMs() + ttl.count(), ttl.count()};
  return true;
}

Result<std::vector<LeaseRow>> MemoryStore::JobLeases() {
  MutexLock lock(db_->mu);
  std::vector<LeaseRow> out;
  for (const auto& [id, job] : db_->t.jobs) {
    if (job.state != JobState::kRunning) continue;
    const WorkerId worker = job.worker_id.value_or(0);
    std::optional<TimeMs> heartbeat;  // none once its worker's row is pruned
    if (auto w = db_->t.workers.find(worker); w != db_->t.workers.end()) {
      heartbeat = w->second.last_heartbeat;
    }
    out.push_back(LeaseRow{JobRef{job.id, job.lease_token}, worker,
                           job.lease_expires_at.value_or(0),
                           Millis(job.active_lease_ms.value_or(0)), heartbeat});
  }
  // In SQLite's order, that of its index of running jobs by worker.
  std::sort(out.begin(), out.end(), [](const LeaseRow& a, const LeaseRow& b) {
    return std::pair(a.worker, a.ref.id) < std::pair(b.worker, b.ref.id);
  });
  return out;
}

Result<RescueReport> MemoryStore::JobRescueSilent(std::span<const LeaseRow> silent) {
  RescueReport report;
  if (silent.empty()) return report;
  MutexLock lock(db_->mu);
  const TimeMs now = clock_->NowMs();
  for (const LeaseRow& l : silent) {
    const JobRow* job = FindRunningLocked(l.ref);
    if (!job || job->lease_expires_at != l.expires_at) continue;  // renewed or finished since
    JobOutcome o;
    o.ref = l.ref;
    o.error.kind = ErrorKind::kLost;
    o.error.message = "lease not renewed for " + FormatDuration(l.length) + " (worker silent)";
    o.lost_by = LossCause::kLeaseExpiry;
    RescuedJob rescued;
    if (FailLocked(o, now, &rescued)) {
      ++report.rescued;
      report.jobs.push_back(std::move(rescued));
    }
  }
  return report;
}

Result<int> MemoryStore::JobExpire() {
  MutexLock lock(db_->mu);
  const TimeMs now = clock_->NowMs();
  int expired = 0;
  for (auto& [id, job] : db_->t.jobs) {
    const bool waiting = job.state == JobState::kScheduled ||
                         job.state == JobState::kAvailable || job.state == JobState::kRetryable;
    if (!waiting || !job.start_deadline_at || *job.start_deadline_at >= now) continue;
    SetJobState(db_->t, job, JobState::kExpired);
    job.finished_at = now;
    ++expired;
  }
  return expired;
}

Result<int> MemoryStore::JobPromote() {
  MutexLock lock(db_->mu);
  return PromoteDueLocked(clock_->NowMs());
}

Result<int> MemoryStore::Prune(Millis retention) {
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  const TimeMs cutoff = clock_->NowMs() - retention.count();
  int pruned = 0;
  for (auto it = t.jobs.begin(); it != t.jobs.end();) {
    const JobRow& job = it->second;
    const bool old = job.finished_at && *job.finished_at < cutoff;
    if (old && IsTerminal(job.state)) {
      it = EraseJobRow(t, it);  // its attempts with it
      ++pruned;
    } else {
      ++it;
    }
  }
  for (auto it = t.workers.begin(); it != t.workers.end();) {
    const WorkerRow& w = it->second;
    const bool gone = w.state == WorkerState::kStopped || w.state == WorkerState::kDead;
    if (gone && w.stopped_at && *w.stopped_at < cutoff) {
      AddSnapshot(t.metrics_retired, w.metrics);
      it = t.workers.erase(it);
    } else {
      ++it;
    }
  }
  const size_t fenced = std::erase_if(t.fenced_writes,
                                      [&](const FencedWrite& f) { return f.at < cutoff; });
  t.metrics_retired[kFencedWrites] += static_cast<double>(fenced);
  return pruned;
}

Status MemoryStore::WorkerPutMetrics(WorkerId id, const std::string& snapshot) {
  MutexLock lock(db_->mu);
  auto w = db_->t.workers.find(id);
  if (w != db_->t.workers.end()) w->second.metrics = SnapshotFromJson(snapshot);
  return Status::Ok();
}

Status MemoryStore::MetricsAdd(const MetricSnapshot& deltas) {
  MutexLock lock(db_->mu);
  AddSnapshot(db_->t.metrics_retired, deltas);
  return Status::Ok();
}

Result<MetricSnapshot> MemoryStore::MetricTotals() {
  MutexLock lock(db_->mu);
  MetricSnapshot out = db_->t.metrics_retired;
  for (const auto& [id, w] : db_->t.workers) AddSnapshot(out, w.metrics);
  out[kFencedWrites] += static_cast<double>(db_->t.fenced_writes.size());
  out["warden_jobs_enqueued_total"] += static_cast<double>(db_->t.last_job_id);
  return out;
}

Status MemoryStore::JobCountsFold() { return Status::Ok(); }  // kept as jobs change

Result<std::vector<JobCountDrift>> MemoryStore::JobCountsVerify() {
  MutexLock lock(db_->mu);
  std::map<std::pair<std::string, std::string>, int64_t> real;
  std::map<std::string, std::set<std::pair<TimeMs, JobId>>> available;
  for (const auto& [id, job] : db_->t.jobs) {
    ++real[{job.queue, JobStateName(job.state)}];
    if (job.state == JobState::kAvailable) available[job.queue].emplace(job.run_at, id);
  }
  std::vector<JobCountDrift> out;
  for (const auto& [key, n] : db_->t.job_counts) {
    auto it = real.find(key);
    const int64_t r = it == real.end() ? 0 : it->second;
    if (n != r) out.push_back(JobCountDrift{key.first, key.second, n, r, {}, false});
  }
  for (const auto& [key, n] : real) {
    if (!db_->t.job_counts.count(key)) {
      out.push_back(JobCountDrift{key.first, key.second, 0, n, {}, false});
    }
  }
  // By group too (schema 11), and each scheduled or retryable group's jobs
  // by run_at.
  std::map<Tables::GroupKey, int64_t> groups;
  std::map<Tables::GroupKey, std::set<std::pair<TimeMs, JobId>>> due;
  for (const auto& [id, job] : db_->t.jobs) {
    const Tables::GroupKey key{job.queue, job.task, !job.command.empty(), job.state};
    ++groups[key];
    if (job.state == JobState::kScheduled || job.state == JobState::kRetryable) {
      due[key].emplace(job.run_at, id);
    }
  }
  auto drift = [&](const Tables::GroupKey& key, int64_t kept, int64_t real) {
    const auto& [queue, task, command, state] = key;
    out.push_back(JobCountDrift{queue, JobStateName(state), kept, real, task, command});
  };
  for (const auto& [key, n] : db_->t.group_counts) {
    auto it = groups.find(key);
    const int64_t r = it == groups.end() ? 0 : it->second;
    if (n != r) drift(key, n, r);
  }
  for (const auto& [key, n] : groups) {
    if (!db_->t.group_counts.count(key)) drift(key, 0, n);
  }
  for (const auto& [key, kept] : db_->t.due_by_group) {
    auto it = due.find(key);
    const bool same = it == due.end() ? kept.empty() : it->second == kept;
    if (!same) {
      drift(key, static_cast<int64_t>(kept.size()),
            it == due.end() ? 0 : static_cast<int64_t>(it->second.size()));
    }
  }
  // The memory store's own index of available jobs: a drift of it would
  // show as a wrong oldest age, so it is checked here too (as "available").
  for (const auto& [queue, kept] : db_->t.available_by_run_at) {
    auto it = available.find(queue);
    const bool same = it == available.end() ? kept.empty() : it->second == kept;
    if (!same) {
      out.push_back(
          JobCountDrift{queue,
                        "available",
                        static_cast<int64_t>(kept.size()),
                        it == available.end() ? 0 : static_cast<int64_t>(it->second.size()),
                        {},
                        false});
    }
  }
  return out;
}

Result<Stats> MemoryStore::GetStats() {
  MutexLock lock(db_->mu);
  Stats stats;
  // By state name, as SQLite orders them.
  std::map<std::string, int64_t> jobs, workers;
  for (const auto& [key, n] : db_->t.job_counts) {
    if (n != 0) jobs[key.second] += n;
  }
  // Still a look at every job (SQLite and PostgreSQL use an index of the
  // quarantined jobs and of the lost attempts): the memory store is for
  // tests and simulations, not for a million jobs.
  for (const auto& [id, job] : db_->t.jobs) {
    if (job.last_error == ErrorKind::kCrashLoop) ++stats.crash_loops;
    int64_t lost = 0;
    for (const AttemptRow& a : job.attempts) {
      if (a.outcome == ErrorKindName(ErrorKind::kLost)) ++lost;
    }
    stats.rescued += lost;
    if (lost > 0) ++stats.rescued_jobs;
  }
  for (const auto& [id, w] : db_->t.workers) ++workers[WorkerStateName(w.state)];
  stats.jobs.assign(jobs.begin(), jobs.end());
  stats.workers.assign(workers.begin(), workers.end());
  stats.fenced_writes = static_cast<int64_t>(db_->t.fenced_writes.size());
  return stats;
}

}  // namespace warden::memory
