// MemoryStore: the claim path: the look, the pick, the claim, start marks.
#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/claim_ahead.h"
#include "core/node_preference.h"
#include "store/memory/memory_store.h"

namespace warden::memory {

bool MemoryStore::AnyDueLocked(TimeMs now) {
  for (const auto& [id, job] : db_->t.jobs) {
    if ((job.state == JobState::kScheduled || job.state == JobState::kRetryable) &&
        job.run_at <= now) {
      return true;
    }
  }
  return false;
}

int MemoryStore::PromoteDueLocked(TimeMs now) {
  int promoted = 0;
  for (auto& [id, job] : db_->t.jobs) {
    if ((job.state == JobState::kScheduled || job.state == JobState::kRetryable) &&
        job.run_at <= now) {
      SetJobState(db_->t, job, JobState::kAvailable);
      ++promoted;
    }
  }
  return promoted;
}

// SqliteStore's ClaimableWhere. Every job is looked at, and the claimable
// ones sorted: O(n log n) in all the jobs kept, which is fine for the few
// thousand a test or a simulation holds (an index in claim order, as
// SQLite's jobs_claim, would make it O(limit)).
std::vector<JobRow*> MemoryStore::ClaimableLocked(const ClaimParams& p, const ClaimFlow& flow,
                                                  TimeMs now) {
  std::unordered_set<std::string> running_keys;
  for (const auto& [id, job] : db_->t.jobs) {
    if (job.state == JobState::kRunning && !job.concurrency_key.empty()) {
      running_keys.insert(job.concurrency_key);
    }
  }
  // (A worker may serve hundreds of queues: one per tenant, say.)
  const std::unordered_set<std::string_view> queues(p.queues.begin(), p.queues.end());
  const std::unordered_set<std::string_view> tasks(p.tasks.begin(), p.tasks.end());
  std::vector<JobRow*> out;
  for (auto& [id, job] : db_->t.jobs) {
    if (job.state != JobState::kAvailable) continue;
    if (job.start_deadline_at && *job.start_deadline_at < now) continue;
    if (!queues.empty() && !queues.count(job.queue)) continue;
    if (db_->t.queue_pauses.count(job.queue) || flow.blocked.count(job.queue)) continue;
    const bool handled = tasks.count(job.task) > 0;
    if (p.allow_commands ? !handled && job.command.empty() : !handled || !job.command.empty()) {
      continue;
    }
    if (running_keys.count(job.concurrency_key)) continue;
    if (!NodeMayClaim(p.node, job.avoid_node, job.avoid_until, now)) continue;
    out.push_back(&job);
  }
  std::sort(out.begin(), out.end(), [](const JobRow* a, const JobRow* b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    if (a->run_at != b->run_at) return a->run_at < b->run_at;
    return a->id < b->id;
  });
  return out;
}

// SqliteStore::PickLocked's walk.
std::vector<JobRow*> MemoryStore::Pick(const ClaimParams& p, const ClaimFlow& flow,
                                       std::span<JobRow* const> claimable) {
  std::vector<JobRow*> picked;
  if (p.limit <= 0) return picked;
  std::unordered_set<std::string> keys;  // one job per concurrency key per batch
  std::map<std::string, int64_t> taken;  // of each limited queue
  // Once the free slots have theirs, jobs for the slots not free yet are
  // taken only if safe to claim ahead, from the next `ahead` jobs at most.
  const int for_free_slots = p.limit - std::clamp(p.ahead, 0, p.limit);
  int looked_ahead = 0;
  int flow_skipped = 0;
  // SQLite's merged claim stops each limited queue's arm at its cap, so
  // the walk never sees that queue's later rows (store/claim_flow.h).
  const bool capped_arms = p.queues.size() >= 2 && p.queues.size() <= 64 && !flow.caps.empty();
  std::map<std::string, int64_t> seen;
  for (JobRow* job : claimable) {
    if (capped_arms) {
      auto cap = flow.caps.find(job->queue);
      if (cap != flow.caps.end() && ++seen[job->queue] > std::min<int64_t>(p.limit, cap->second)) {
        continue;
      }
    }
    if (static_cast<int>(picked.size()) >= p.limit) break;
    const bool for_later_slot = static_cast<int>(picked.size()) >= for_free_slots;
    if (for_later_slot) {
      if (++looked_ahead > p.ahead) break;
      if (!SafeToClaimAhead(ToJobInfo(*job))) continue;  // (at most `ahead` rows a claim)
    }
    if (!FlowTakes(flow, job->queue, taken[job->queue], for_later_slot)) {
      if (++flow_skipped > p.limit) break;  // as SQLite's walk (PickLocked there)
      continue;
    }
    if (!job->concurrency_key.empty() && !keys.insert(job->concurrency_key).second) continue;
    ++taken[job->queue];
    picked.push_back(job);
  }
  return picked;
}

Result<std::vector<JobInfo>> MemoryStore::JobClaim(const ClaimParams& claim) {
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  const TimeMs now = clock_->NowMs();
  ClaimParams p;
  ClaimFlow flow;
  if (!FlowLocked(claim, now, &p, &flow)) return std::vector<JobInfo>{};
  // As SQLite looks before it takes the write lock: nothing to claim is an
  // empty answer even for a worker that is no longer active.
  const bool due = AnyDueLocked(now);
  std::vector<JobRow*> claimable;
  if (!due) {
    claimable = ClaimableLocked(p, flow, now);
    if (claimable.empty()) return std::vector<JobInfo>{};
  }
  auto w = t.workers.find(p.worker);
  if (w == t.workers.end() || w->second.state != WorkerState::kActive) {
    return FailedPrecondition("worker " + std::to_string(p.worker) +
                              " is not active (declared dead, draining or stopped)");
  }
  if (due) {
    // Due scheduled and retryable jobs become available first, so a claim
    // never waits for the sweeper.
    PromoteDueLocked(now);
    claimable = ClaimableLocked(p, flow, now);
  }
  std::vector<JobInfo> claimed;
  std::map<std::string, int64_t> started;  // of rate-limited queues
  for (JobRow* job : Pick(p, flow, claimable)) {
    SetJobState(t, *job, JobState::kRunning);
    job->worker_id = p.worker;
    ++job->lease_token;
    ++job->attempt;
    job->active_lease_ms = job->lease_ms.value_or(p.default_lease.count());
    job->lease_expires_at = now + *job->active_lease_ms;
    job->started_mark = false;
    job->attempt_started_at.reset();
    job->cancel_requested = false;
    job->started_at = now;
    if (flow.rated.count(job->queue)) ++started[job->queue];
    // As SQLite reads a claim back: the row alone, without its extras.
    claimed.push_back(ToJobInfo(*job));
  }
  for (const auto& [queue, n] : started) t.queue_starts[queue][now] += n;
  return claimed;
}

Result<bool> MemoryStore::JobMarkStarted(JobRef ref) {
  MutexLock lock(db_->mu);
  JobRow* job = FindRunningLocked(ref);
  if (!job || job->cancel_requested) return false;
  job->started_mark = true;
  job->attempt_started_at = clock_->NowMs();
  return true;
}

}  // namespace warden::memory
