// MemoryStore: flow control (warden/flow.h), as SqliteStore has it: the
// claim's reading of limits, setting them, and what holds a queue now.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/flow.h"
#include "store/memory/memory_store.h"

namespace warden::memory {

bool MemoryStore::FlowLocked(const ClaimParams& p, TimeMs now, ClaimParams* narrowed,
                             ClaimFlow* flow) {
  Tables& t = db_->t;
  std::set<std::string> paused;
  for (const auto& [queue, at] : t.queue_pauses) paused.insert(queue);
  std::vector<FlowRow> limited;
  for (const auto& [queue, limits] : t.queue_limits) {
    if (paused.count(queue)) continue;
    if (!p.queues.empty() && std::find(p.queues.begin(), p.queues.end(), queue) == p.queues.end()) {
      continue;
    }
    FlowRow r;
    r.queue = queue;
    r.limits = limits;
    auto running = t.job_counts.find({queue, JobStateName(JobState::kRunning)});
    r.running = running == t.job_counts.end() ? 0 : running->second;
    if (limits.rate) {
      auto& starts = t.queue_starts[queue];
      const TimeMs window_start = now - limits.rate->per.count();  // exclusive
      starts.erase(starts.begin(), starts.upper_bound(window_start));
      for (const auto& [at, n] : starts) r.recent_starts += n;
    }
    limited.push_back(std::move(r));
  }
  *flow = FlowOf(limited);
  NodeOfClaimLocked(p.worker, flow);
  return Narrow(p, paused, *flow, narrowed);
}

Result<bool> MemoryStore::QueueSetLimits(const std::string& queue, const QueueLimits& limits,
                                         const AuditEntry& audit) {
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  const TimeMs now = clock_->NowMs();
  auto it = t.queue_limits.find(queue);
  const QueueLimits before = it == t.queue_limits.end() ? QueueLimits{} : it->second;
  const bool changed = !(before == limits);
  if (limits.empty()) {
    t.queue_limits.erase(queue);
  } else {
    t.queue_limits[queue] = limits;
  }
  // The window's record goes with the rate; a new rate judges the claims
  // kept for the old one.
  if (!limits.rate) t.queue_starts.erase(queue);
  AuditEntry entry = audit;
  entry.count = changed ? 1 : 0;
  AppendAudit(t, std::move(entry), now);
  if (changed) db_->wake->WakeAll();
  return changed;
}

Result<std::optional<QueueFlow>> MemoryStore::QueueFlowOf(const std::string& queue) {
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  auto it = t.queue_limits.find(queue);
  if (it == t.queue_limits.end()) return std::optional<QueueFlow>();
  const TimeMs now = clock_->NowMs();
  QueueFlow f;
  f.limits = it->second;
  std::vector<const JobRow*> running;
  for (const auto& [id, job] : t.jobs) {
    if (job.state == JobState::kRunning && job.queue == queue) running.push_back(&job);
  }
  f.running = static_cast<int64_t>(running.size());
  std::sort(running.begin(), running.end(), [](const JobRow* a, const JobRow* b) {
    return std::make_pair(a->started_at.value_or(0), a->id) <
           std::make_pair(b->started_at.value_or(0), b->id);
  });
  for (const JobRow* job : running) {
    if (static_cast<int>(f.holders.size()) >= kFlowHoldersShown) break;
    f.holders.emplace_back(job->id, job->worker_id.value_or(0));
  }
  if (f.limits.rate) {
    std::vector<StartCount> window;
    auto starts = t.queue_starts.find(queue);
    if (starts != t.queue_starts.end()) {
      for (const auto& [at, n] : starts->second) {
        if (at > now - f.limits.rate->per.count()) window.push_back(StartCount{at, n});
      }
    }
    for (const StartCount& s : window) f.recent_starts += s.n;
    f.next_start_at = NextStartAt(*f.limits.rate, window);
  }
  return std::optional<QueueFlow>(std::move(f));
}

}  // namespace warden::memory
