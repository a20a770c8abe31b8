// MemStore: jobs (sqlite_store.cc and its _claim, _finish and _admin files). Workers and
// maintenance are in mem_store_workers.cc.
#include <algorithm>
#include <unordered_set>

#include "core/claim_ahead.h"
#include "core/first_run.h"
#include "core/operator_rules.h"
#include "mem_store.h"

namespace warden::sim {

MemStore::MemStore(Mutation mutation, uint64_t seed, StoreObserver* observer)
    : mutation_(mutation), jitter_(Mix(seed, 0x717e4)), observer_(observer) {}

namespace {

// What SafeToClaimAhead reads of a job.
JobInfo AheadView(const MemJob& j) {
  JobInfo info;
  info.delivery = j.delivery;
  info.crashes = j.crashes;
  info.max_crashes = j.max_crashes;
  info.retry = j.retry;
  info.charged = j.charged;
  info.max_attempts = j.max_attempts;
  return info;
}

}  // namespace

MemJob* MemStore::Find(JobId id) {
  return id >= 1 && id <= static_cast<JobId>(jobs_.size()) ? &jobs_[id - 1] : nullptr;
}

JobId MemStore::JobInsert(const JobSpec& spec, TimeMs now) {
  MemJob j;
  j.id = static_cast<JobId>(jobs_.size()) + 1;
  j.state = FirstState(spec, now);
  j.run_at = FirstRunAt(spec, now);
  if (spec.start_deadline) j.start_deadline_at = now + spec.start_deadline->count();
  j.max_attempts = spec.max_attempts;
  j.max_crashes = spec.max_crashes;
  j.retry = spec.retry;
  j.delivery = spec.delivery;
  if (spec.lease) j.lease_ms = spec.lease->count();
  j.concurrency_key = spec.concurrency_key;
  j.priority = spec.priority;
  j.timeout = spec.timeout;
  jobs_.push_back(std::move(j));
  observer_->OnRunAtSet(jobs_.back(), Millis(jobs_.back().run_at - now));
  return jobs_.back().id;
}

int MemStore::PromoteDue(TimeMs now) {
  int n = 0;
  for (MemJob& j : jobs_) {
    if ((j.state == JobState::kScheduled || j.state == JobState::kRetryable) && j.run_at <= now) {
      j.state = JobState::kAvailable;
      ++n;
    }
  }
  return n;
}

Result<std::vector<JobInfo>> MemStore::JobClaim(const ClaimParams& p, TimeMs now) {
  const MemWorker* w = worker(p.worker);
  if (!w || w->state != WorkerState::kActive) {
    return FailedPrecondition("worker " + std::to_string(p.worker) + " is not active");
  }
  // Due scheduled and retryable jobs become available first.
  PromoteDue(now);
  const bool check_keys = mutation_ != Mutation::kNoConcurrencyCheck;
  std::unordered_set<std::string> running_keys;
  for (const MemJob& j : jobs_) {
    if (j.state == JobState::kRunning && !j.concurrency_key.empty()) {
      running_keys.insert(j.concurrency_key);
    }
  }
  std::vector<MemJob*> picks;
  for (MemJob& j : jobs_) {
    if (j.state != JobState::kAvailable) continue;
    if (j.start_deadline_at && *j.start_deadline_at < now) continue;
    if (check_keys && !j.concurrency_key.empty() && running_keys.count(j.concurrency_key)) continue;
    picks.push_back(&j);
  }
  // ORDER BY priority DESC, run_at, id
  std::stable_sort(picks.begin(), picks.end(), [](const MemJob* a, const MemJob* b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    if (a->run_at != b->run_at) return a->run_at < b->run_at;
    return a->id < b->id;
  });
  std::vector<JobInfo> claimed;
  std::unordered_set<std::string> batch_keys;  // one job per key per batch
  // Once the free slots have theirs, jobs for the slots not free yet are
  // taken only if safe to claim ahead, from the next `ahead` rows at most.
  const int for_free_slots = p.limit - std::clamp(p.ahead, 0, p.limit);
  int looked_ahead = 0;
  for (MemJob* j : picks) {
    if (static_cast<int>(claimed.size()) >= p.limit) break;
    if (static_cast<int>(claimed.size()) >= for_free_slots) {
      if (++looked_ahead > p.ahead) break;
      if (!SafeToClaimAhead(AheadView(*j))) continue;
    }
    if (check_keys && !j->concurrency_key.empty() &&
        !batch_keys.insert(j->concurrency_key).second) {
      continue;
    }
    j->state = JobState::kRunning;
    j->worker = p.worker;
    j->claimed_at = now;
    ++j->lease_token;
    ++j->attempt;
    j->active_lease_ms = j->lease_ms.value_or(p.default_lease.count());
    j->lease_expires_at = now + j->active_lease_ms;
    j->extended_by = p.worker;
    j->started_mark = false;
    j->cancel_requested = false;
    j->attempt_workers.push_back(p.worker);
    observer_->OnClaimed(*j);
    JobInfo info;
    info.id = j->id;
    info.state = j->state;
    info.attempt = j->attempt;
    info.delivery = j->delivery;
    info.timeout = j->timeout;
    if (j->lease_ms) info.lease = Millis(*j->lease_ms);
    info.concurrency_key = j->concurrency_key;
    info.worker = j->worker;
    info.lease_token = j->lease_token;
    info.lease_expires_at = j->lease_expires_at;
    info.checkpoint = j->checkpoint;
    claimed.push_back(std::move(info));
  }
  return claimed;
}

bool MemStore::JobMarkStarted(JobRef ref, TimeMs now) {
  (void)now;
  MemJob* j = Find(ref.id);
  if (!j || j->lease_token != ref.lease_token || j->state != JobState::kRunning ||
      j->cancel_requested) {
    return false;
  }
  observer_->OnAcceptedWrite("start", *j, ref.lease_token, j->lease_token);
  j->started_mark = true;
  return true;
}

bool MemStore::Succeed(const JobOutcome& o, TimeMs now) {
  MemJob* j = Find(o.ref.id);
  if (!j || j->state != JobState::kRunning) return false;
  if (j->lease_token != o.ref.lease_token && mutation_ != Mutation::kCompleteUnfenced) {
    return false;
  }
  observer_->OnAcceptedWrite("complete", *j, o.ref.lease_token, j->lease_token);
  j->state = JobState::kSucceeded;
  j->finished_at = now;
  j->lease_expires_at.reset();
  return true;
}

bool MemStore::Fail(const JobOutcome& o, TimeMs now, const char* rescue) {
  MemJob* j = Find(o.ref.id);
  if (!j || j->lease_token != o.ref.lease_token || j->state != JobState::kRunning) return false;
  FailureInput in;
  in.kind = o.error.kind;
  in.delivery = j->delivery;
  in.started_mark = j->started_mark;
  in.retry = j->retry;
  in.charged = j->charged;
  in.max_attempts = j->max_attempts;
  in.crashes = j->crashes;
  in.max_crashes = j->max_crashes;
  // An operator's cancel wins over however the attempt ended.
  if (j->cancel_requested) in.kind = ErrorKind::kCancelled;
  if (rescue && mutation_ == Mutation::kRescueAmoRetryable) in.delivery = Delivery::kAtLeastOnce;
  const FailureDecision d = DecideFailure(in, jitter_.Unit());
  if (rescue) {
    observer_->OnTakenAway(*j, j->lease_token, rescue);
  } else {
    observer_->OnAcceptedWrite("fail", *j, o.ref.lease_token, j->lease_token);
  }
  j->state = d.next;
  // A retry without backoff keeps its place in line (its old run_at).
  if (d.delay.count() > 0) {
    j->run_at = now + d.delay.count();
    observer_->OnRunAtSet(*j, d.delay);
  }
  j->charged += d.charge ? 1 : 0;
  j->crashes += d.count_crash ? 1 : 0;
  j->last_error = d.kind;
  if (IsTerminal(d.next)) {
    j->finished_at = now;
  } else {
    j->finished_at.reset();
  }
  j->lease_expires_at.reset();
  j->cancel_requested = false;
  return true;
}

std::vector<bool> MemStore::JobFinishMany(WorkerId worker, std::span<const JobOutcome> outcomes,
                                          TimeMs now) {
  (void)worker;
  std::vector<bool> accepted;
  accepted.reserve(outcomes.size());
  for (const JobOutcome& o : outcomes) {
    accepted.push_back(o.success ? Succeed(o, now) : Fail(o, now, nullptr));
  }
  return accepted;
}

bool MemStore::JobCheckpoint(JobRef ref, int64_t value) {
  MemJob* j = Find(ref.id);
  if (!j || j->lease_token != ref.lease_token || j->state != JobState::kRunning) return false;
  observer_->OnAcceptedWrite("checkpoint", *j, ref.lease_token, j->lease_token);
  j->checkpoint = value;
  return true;
}

Status MemStore::JobRetry(JobId id, TimeMs now) {
  MemJob* j = Find(id);
  if (!j) return NotFound("no job with id " + std::to_string(id));
  WARDEN_RETURN_IF_ERROR(CheckRetryAllowed(id, j->state));
  j->state = JobState::kAvailable;
  j->run_at = now;
  j->charged = 0;
  j->crashes = 0;
  j->finished_at.reset();
  j->start_deadline_at.reset();
  return Status::Ok();
}

Result<JobState> MemStore::JobCancel(JobId id, TimeMs now) {
  MemJob* j = Find(id);
  if (!j) return NotFound("no job with id " + std::to_string(id));
  WARDEN_RETURN_IF_ERROR(CheckCancelAllowed(id, j->state));
  if (j->state == JobState::kRunning) {
    j->cancel_requested = true;
    return JobState::kRunning;
  }
  j->state = JobState::kCancelled;
  j->finished_at = now;
  j->last_error = ErrorKind::kCancelled;
  return JobState::kCancelled;
}

std::optional<Millis> MemStore::JobNextDueIn(TimeMs now) const {
  std::optional<TimeMs> first;
  for (const MemJob& j : jobs_) {
    if (j.state != JobState::kScheduled && j.state != JobState::kRetryable) continue;
    if (!first || j.run_at < *first) first = j.run_at;
  }
  if (!first) return std::nullopt;
  return Millis(std::max<int64_t>(0, *first - now));
}

}  // namespace warden::sim
