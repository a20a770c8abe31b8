// Worker::Impl's claim loop (Run's thread): claims for the free slots and,
// for short jobs, ahead of them (core/claim_ahead.h), queues the jobs for
// the slots, and sleeps until there is room or work again.
#include <algorithm>

#include "core/claim_ahead.h"
#include "core/held_bound.h"
#include "core/lease.h"
#include "runtime/worker_impl.h"

namespace warden {

Worker::Impl::ClaimRoomNow Worker::Impl::MeasureClaimRoom() {
  ClaimRoomNow room;
  {
    MutexLock lock(mu_);
    room.ahead = ClaimAhead(opt_.concurrency, claim_us_avg_, job_us_avg_);
    room.held = static_cast<int>(running_.size());
  }
  // Counted after `held`: a job moves from running_ to the completer
  // (SlotLoop adds, then erases), so it is counted once or twice, never
  // missed.
  room.unsettled = completer_->Unsettled();
  room.slots_free = std::max(0, opt_.concurrency - room.held);
  // A job stays `running` in the store until its outcome is committed,
  // not just until its handler returns: counting only `held`, a worker
  // whose completer fell behind (slow fsync, slow PostgreSQL) kept
  // claiming, and held tens of thousands of run-but-unrecorded jobs that
  // a crash would all run again. The outcomes waiting for their commit
  // have an allowance of their own (core/held_bound.h), so running and
  // group commit still overlap, and the worker holds at most
  // HeldBound(concurrency) jobs: slots + claim-ahead + max(slots, 1024).
  // Held back by it, the loop sleeps until a batch commits (on_batch).
  room.free = ClaimRoom(opt_.concurrency, opt_.concurrency + room.ahead, room.held,
                        room.unsettled);
  room.by_unsettled = room.free < opt_.concurrency + room.ahead - room.held;
  return room;
}

Worker::Impl::ClaimStep Worker::Impl::ClaimAndQueue(ClaimParams& params,
                                                    const ClaimRoomNow& room,
                                                    ClaimRetry& retry, size_t* got) {
  *got = 0;
  params.worker = id_;
  params.limit = room.free;
  params.ahead = std::max(0, room.free - room.slots_free);
  const int64_t start = clock_.MonotonicMs();
  {
    MutexLock lock(mu_);
    claim_sent_mono_ = start;
  }
  const int64_t sent_us = clock_.MonotonicUs();
  auto claimed = claim_store_->JobClaim(params);
  const double claim_us = static_cast<double>(clock_.MonotonicUs() - sent_us);
  if (!claimed.has_value()) {
    {
      MutexLock lock(mu_);
      claim_sent_mono_.reset();
    }
    if (claimed.error().code() == StatusCode::kDataLoss) {
      // Retrying cannot mend a damaged database, and carrying on would
      // keep writing heartbeats into it: stop, and say why (exit 1).
      Log(LogLevel::kError, "stopping: " + claimed.error().ToString());
      fatal_ = claimed.error();
      Stop(/*release_now=*/false);
      return ClaimStep::kFatal;
    }
    if (!retry.reported) {
      Log(LogLevel::kWarn, "claim failed, retrying: " + claimed.error().ToString());
    }
    retry.reported = true;
    {
      UniqueMutexLock lock(mu_);
      sleep_cv_.WaitFor(lock, retry.backoff, [&] { return stopping_.load(); });
    }
    retry.backoff = std::min(retry.backoff * 2, Millis(2000));
    return ClaimStep::kFailed;
  }
  if (retry.reported) Log(LogLevel::kInfo, "claims work again");
  retry = ClaimRetry{};
  *got = claimed->size();
  counters_.claimed_ahead += std::max(0, static_cast<int>(*got) - room.slots_free);
  CountClaimed(*claimed);
  QueueClaimed(*claimed, params.worker, start, claim_us);
  return ClaimStep::kClaimed;
}

void Worker::Impl::QueueClaimed(std::vector<JobInfo>& claimed, WorkerId worker,
                                int64_t claim_start_mono, double claim_us) {
  bool shorter_lease = false, longer_lease = false;
  {
    MutexLock lock(mu_);
    claim_sent_mono_.reset();
    claim_us_avg_ = Smooth(claim_us_avg_, claim_us);
    for (JobInfo& job : claimed) {
      auto r = std::make_shared<RunningJob>();
      r->lease = job.lease.value_or(opt_.lease);
      r->worker = worker;
      r->claim_start_mono = claim_start_mono;
      r->job = std::move(job);
      shorter_lease |= HeartbeatFor(r->lease, opt_.heartbeat) < opt_.heartbeat;
      longer_lease |= r->lease > opt_.lease;
      running_[r->job.id] = r;
      queue_.push_back(std::move(r));
    }
  }
  if (shorter_lease) heartbeat_cv_.NotifyAll();
  if (longer_lease) env_.SignalWakeFd(longer_lease_fd_);
  if (!claimed.empty()) {
    MutexLock lock(mu_);
    WakeSlotsLocked();
  }
}

void Worker::Impl::WaitForClaimRoom(const ClaimRoomNow& room, bool claimed_none) {
  Millis wait = opt_.poll_interval;
  if (claimed_none && room.free > 0) {
    // Sleep no longer than until the next scheduled or backed-off job
    // (with no room to claim, a freed slot or a commit wakes it first).
    auto due = claim_store_->JobNextDueIn();
    if (due.has_value() && due->has_value()) wait = std::min(wait, **due + Millis(1));
  }
  // Asleep before counting again: a slot that frees from here on wakes
  // the loop, and one that freed since `held` was counted is seen here.
  claim_loop_asleep_ = true;
  if (room.free <= 0 && (static_cast<int>(Inflight()) < room.held ||
                         (room.by_unsettled && completer_->Unsettled() < room.unsettled))) {
    claim_loop_asleep_ = false;
    return;
  }
  // Woken by a freed slot, a committed batch, stop, or the session loop
  // (new jobs).
  pollfd fd{wake_fd_, POLLIN, 0};
  env_.Poll(std::span(&fd, 1), clock_.MonotonicMs() + wait.count());
  claim_loop_asleep_ = false;
  env_.DrainWakeFd(wake_fd_);
}

void Worker::Impl::ClaimLoop() {
  ClaimParams params;
  params.queues = opt_.queues;
  params.allow_commands = opt_.allow_commands;
  params.default_lease = opt_.lease;
  params.tasks = Tasks();
  params.node = opt_.node.empty() ? env_.Host().node : opt_.node;  // as Register() writes it

  ClaimRetry retry;
  bool gathered = false;
  while (!stopping_) {
    const ClaimRoomNow room = MeasureClaimRoom();
    // One claim transaction per freed slot would make short jobs cost a
    // commit each: while most slots are busy, let a few more free up first.
    // Not when claiming ahead: the jobs are short, and the claims follow
    // one another, each taking what freed up during the last.
    if (room.free > 0 && room.free * 2 < opt_.concurrency && room.ahead == 0 && !gathered) {
      gathered = true;
      UniqueMutexLock lock(mu_);
      sleep_cv_.WaitFor(lock, opt_.flush_window);
      continue;
    }
    gathered = false;
    size_t got = 0;
    if (room.free > 0) {
      const ClaimStep step = ClaimAndQueue(params, room, retry, &got);
      if (step == ClaimStep::kFatal) break;
      if (step == ClaimStep::kFailed) continue;
      if (static_cast<int>(got) == room.free) continue;  // there may be more waiting
    }
    if (got == 0 && NothingLeftToRun(Inflight() == 0 && completer_->idle())) {
      stopping_ = true;
      break;
    }
    WaitForClaimRoom(room, got == 0);
  }
}

bool Worker::Impl::NothingLeftToRun(bool may_exit) {
  const int64_t now_mono = clock_.MonotonicMs();
  const bool exit_check = opt_.exit_when_idle && may_exit;
  const bool note_due = !opt_.allow_commands && !said_commands_skipped_ &&
                        now_mono >= next_commands_check_mono_;
  if (!exit_check && !note_due) return false;
  // Its own queues only: other queues' backlogs are no business of an idle
  // worker's polls (they may be large); they are read once, at its exit.
  auto backlog = claim_store_->JobBacklog(opt_.queues);
  if (!backlog.has_value()) return false;  // asked again at the next idle poll
  const TimeMs now = clock_.NowMs();
  const Serving self{opt_.queues, Tasks(), opt_.allow_commands};
  if (note_due) {
    next_commands_check_mono_ = now_mono + 60'000;
    Serving with_commands = self;
    with_commands.allow_commands = true;
    std::vector<BacklogGroup> skipped;
    for (const BacklogGroup& g : *backlog) {
      if (g.command && g.state != JobState::kRunning &&
          CanRun(with_commands, g.queue, g.task, true)) {
        skipped.push_back(g);
      }
    }
    if (!skipped.empty()) {
      said_commands_skipped_ = true;
      Log(LogLevel::kWarn,
          "command jobs wait on its queues, and this worker does not run command jobs (a "
          "worker started with --allow-cmd does): " + DescribeGroups(skipped, now));
    }
  }
  if (!exit_check) return false;
  // A paused queue's jobs are not work it can do now: they wait for a
  // resume, which may never come while this batch runs.
  std::map<std::string, bool> paused;
  auto is_paused = [&](const std::string& queue) {
    auto it = paused.find(queue);
    if (it != paused.end()) return it->second;
    auto at = claim_store_->QueuePausedAt(queue);
    // Unknown: as running, so that a failed read never ends the worker.
    return paused[queue] = at.has_value() && at->has_value();
  };
  for (const BacklogGroup& g : *backlog) {
    const bool later = g.state == JobState::kScheduled && g.next_run_at > now;
    if (CanRun(self, g.queue, g.task, g.command) && !later && !is_paused(g.queue)) return false;
  }
  auto everything = claim_store_->JobBacklog({});
  std::vector<BacklogGroup> left;
  for (const BacklogGroup& g : everything.has_value() ? *everything : *backlog) {
    if (g.state != JobState::kRunning) left.push_back(g);
  }
  std::string paused_queues;
  for (const auto& [queue, is] : paused) {
    if (is) paused_queues += (paused_queues.empty() ? "" : ", ") + queue;
  }
  Log(LogLevel::kInfo, "nothing left that it can run; exiting (--exit-when-idle)" +
                           (left.empty() ? "" : ". Still waiting: " + DescribeGroups(left, now)) +
                           (paused_queues.empty() ? "" : " (paused: " + paused_queues + ")"));
  return true;
}

}  // namespace warden
