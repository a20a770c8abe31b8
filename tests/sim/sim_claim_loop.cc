// SimWorker: the claim loop (Worker::Impl::ClaimLoop), claiming ahead of
// the free slots for short jobs (core/claim_ahead.h), and the slots taking
// the claimed jobs in order (SlotLoop).
#include <algorithm>

#include "core/claim_ahead.h"
#include "core/lease.h"
#include "sim_worker.h"

namespace warden::sim {

void SimWorker::ClaimWait(Millis d, bool poll) {
  waiting_ = true;
  waiting_poll_ = poll;
  const uint64_t gen = ++wait_gen_;
  SleepMono(d, [this, gen] {
    if (gen != wait_gen_) return;
    waiting_ = waiting_poll_ = false;
    ClaimStep();
  });
}

void SimWorker::WakeClaimLoop() {
  if (waiting_ && waiting_poll_) {
    waiting_ = waiting_poll_ = false;
    ++wait_gen_;
    pending_wake_ = false;  // read with the poll
    Soon([this] { ClaimStep(); });
    return;
  }
  pending_wake_ = true;  // the eventfd keeps it for the next poll
}

void SimWorker::ClaimStep() {
  if (stopping_) return Shutdown();
  const int concurrency = info_.concurrency;
  // Held jobs count whether queued or in a slot.
  const int ahead = ClaimAhead(concurrency, claim_us_avg_, job_us_avg_);
  const int held = static_cast<int>(running_.size());
  const int slots_free = std::max(0, concurrency - held);
  const int free = concurrency + ahead - held;
  // While most slots are busy, let a few more free up first (not when
  // claiming ahead).
  if (free > 0 && free * 2 < concurrency && ahead == 0 && !gathered_) {
    gathered_ = true;
    return ClaimWait(t_.flush_window, /*poll=*/false);
  }
  gathered_ = false;
  if (free <= 0) {
    if (pending_wake_) {
      pending_wake_ = false;
      return Soon([this] { ClaimStep(); });
    }
    return ClaimWait(t_.poll, /*poll=*/true);
  }
  ClaimParams p;
  p.worker = id_;
  p.limit = free;
  p.ahead = free - slots_free;
  p.default_lease = t_.lease;
  const int64_t start = MonoMs();
  const int64_t sent_us = MonoUs();
  claim_in_flight_ = true;
  claim_sent_at_ = w_.now();
  claim_sent_mono_ = start;
  w_.Call<std::vector<JobInfo>>(
      *this, "claim",
      [p](MemStore& s, TimeMs now) -> Result<std::vector<JobInfo>> { return s.JobClaim(p, now); },
      [this, worker = p.worker, start, sent_us, free, slots_free](
          Result<std::vector<JobInfo>> claimed) {
        claim_in_flight_ = false;
        if (!claimed.has_value()) {
          const Millis wait = claim_backoff_;
          claim_backoff_ = std::min(claim_backoff_ * 2, Millis(2000));
          return ClaimWait(wait, /*poll=*/false);
        }
        claim_backoff_ = Millis(50);
        claim_us_avg_ = Smooth(claim_us_avg_, static_cast<double>(MonoUs() - sent_us));
        const int got = static_cast<int>(claimed->size());
        ClaimReceived(std::move(claimed).value(), worker, start, slots_free);
        if (got == free) return Soon([this] { ClaimStep(); });  // there may be more
        if (got > 0) return ClaimPoll(t_.poll);
        // Sleep no longer than until the next scheduled or backed-off job.
        w_.Call<std::optional<Millis>>(
            *this, "next due",
            [](MemStore& s, TimeMs now) -> Result<std::optional<Millis>> {
              return s.JobNextDueIn(now);
            },
            [this](Result<std::optional<Millis>> due) {
              Millis wait = t_.poll;
              if (due.has_value() && due->has_value()) wait = std::min(wait, **due + Millis(1));
              ClaimPoll(wait);
            });
      });
}

// The claimed jobs are held from now on and queued for the slots.
void SimWorker::ClaimReceived(std::vector<JobInfo> claimed, WorkerId worker, int64_t start_ms,
                              int slots_free) {
  const int got = static_cast<int>(claimed.size());
  if (got > slots_free) w_.CountClaimedAhead(got - slots_free);
  bool shorter_lease = false, longer_lease = false;
  for (JobInfo& job : claimed) {
    auto r = std::make_shared<SimRun>();
    r->lease = job.lease.value_or(t_.lease);
    r->worker = worker;
    r->claim_start_mono = start_ms;
    r->job = std::move(job);
    shorter_lease |= HeartbeatFor(r->lease, t_.heartbeat) < t_.heartbeat;
    longer_lease |= r->lease > t_.lease;
    running_[r->job.id] = r;
    delivered_.emplace(r->job.id, r->job.lease_token);
    held_.push_back(r);
    queue_.push_back(r);
    w_.trace().Line(w_.now(), "{}: claimed job {} (token {}, lease {}ms){}", info_.name,
                    r->job.id, r->job.lease_token, r->lease.count(),
                    busy_slots_ + static_cast<int>(queue_.size()) > info_.concurrency
                        ? " ahead of a free slot"
                        : "");
  }
  TakeQueued();
  // heartbeat_cv_: the heartbeat loop recomputes its interval.
  if (shorter_lease) HeartbeatWake();
  // longer_lease_fd_: the session loop asks for a longer keepalive.
  if (longer_lease) Soon([this] { SessionKeepAlive(); });
  if (got > 0) WatchdogArm();
}

// poll(wake_fd, wait), then drain the eventfd.
void SimWorker::ClaimPoll(Millis wait) {
  if (pending_wake_) {
    pending_wake_ = false;
    return Soon([this] { ClaimStep(); });
  }
  ClaimWait(wait, /*poll=*/true);
}

void SimWorker::TakeQueued() {
  while (busy_slots_ < info_.concurrency && !queue_.empty()) {
    std::shared_ptr<SimRun> r = std::move(queue_.front());
    queue_.pop_front();
    ++busy_slots_;
    r->in_slot = true;
    Soon([this, r] {
      r->slot_taken_us = MonoUs();
      Execute(r);
    });
  }
}

}  // namespace warden::sim
