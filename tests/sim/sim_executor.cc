// SimWorker: one slot running one job (runtime/executor.cc: the start gate,
// the job's process and its supervisor's stop/timeout handling) and the
// completer (runtime/completer.cc).
//
// The job's process starts in steps of its own: the slot checks that the
// lease is provably its own (LeaseProvenUntil) and spawns; the process
// then compares its host's clock with that deadline just before exec and
// exits unrun if it is past. Its payload is on a memfd as stdin, so it
// needs nothing more from its worker to begin: a stop of the worker alone
// does not delay its start past the check. (start_needs_worker: before
// the fix, it began only once the worker's supervisor loop wrote its stdin
// pipe, and checked nothing.)
#include <algorithm>

#include "core/claim_ahead.h"
#include "sim_worker.h"

namespace warden::sim {
namespace {

ErrorKind KindFor(Stop why) {
  switch (why) {
    case Stop::kCancel:
      return ErrorKind::kCancelled;
    case Stop::kShutdown:
      return ErrorKind::kReleased;
    case Stop::kFence:
    case Stop::kNone:
      break;
  }
  return ErrorKind::kLost;
}

JobOutcome Failure(const SimRun& r, ErrorKind kind) {
  JobOutcome o;
  o.ref = JobRef{r.job.id, r.job.lease_token};
  o.success = false;
  o.error.kind = kind;
  return o;
}

constexpr size_t kMaxBatch = 512;

}  // namespace

void SimWorker::Execute(std::shared_ptr<SimRun> r) {
  // A job claimed but not started when shutdown began goes straight back.
  if (stopping_) RequestStop(r, Stop::kShutdown);
  // A worker that has just woken from a freeze must not start a job whose
  // lease may already be someone else's.
  if (LeaseMayBeGone(*r)) RequestStop(r, Stop::kFence);
  if (r->stop != Stop::kNone) return FinishRun(r, Failure(*r, KindFor(r->stop)));
  if (r->job.delivery == Delivery::kAtMostOnce) return MarkStarted(r);
  StartIfHeld(r);
}

void SimWorker::MarkStarted(std::shared_ptr<SimRun> r) {
  const JobRef ref{r->job.id, r->job.lease_token};
  w_.Call<bool>(
      *this, "mark started",
      [ref](MemStore& s, TimeMs now) -> Result<bool> { return s.JobMarkStarted(ref, now); },
      [this, r](Result<bool> marked) {
        if (!marked.has_value()) {
          // Retried while the lease may still be ours.
          const int64_t deadline = r->claim_start_mono + r->lease.count();
          if (marked.error().transient() && MonoMs() < deadline && !threads_done_) {
            const Millis wait = r->mark_backoff;
            r->mark_backoff = std::min(r->mark_backoff * 2, Millis(1000));
            return SleepMono(wait, [this, r] { MarkStarted(r); });
          }
          // Not started: reported lost without the mark, it is requeued.
          return FinishRun(r, Failure(*r, ErrorKind::kLost));
        }
        if (!*marked) return FinishRun(r, Failure(*r, ErrorKind::kCancelled));
        StartIfHeld(r);
      });
}

// Checked again: the worker may have been frozen while the start mark was
// in flight, and the store may have given the job away since.
void SimWorker::StartIfHeld(std::shared_ptr<SimRun> r) {
  const int64_t proven_until = LeaseProvenUntil(*r);
  if (MonoMs() >= proven_until) RequestStop(r, Stop::kFence);
  if (r->stop != Stop::kNone) return FinishRun(r, Failure(*r, KindFor(r->stop)));
  r->started = true;
  Spawn(r, proven_until);
}

void SimWorker::Spawn(std::shared_ptr<SimRun> r, int64_t proven_until_ms) {
  r->script = w_.ScriptFor(r->job.id, r->job.attempt);
  r->process_running = true;
  job_processes_.push_back(r);
  // fork, then exec in the child a moment later.
  const SimUs exec_at = w_.now() + w_.rng().Range(50, 500);
  if (w_.options().mutation == Mutation::kStartNeedsWorker) {
    // The child waits on its stdin pipe for the supervisor loop to fill it.
    w_.Post(exec_at, JobsOwner(process_), [this, r] {
      r->exec_done = true;
      if (r->stdin_written) BeginWork(r);
    });
    Soon([this, r] {
      r->stdin_written = true;
      if (r->exec_done) BeginWork(r);
    });
  } else {
    w_.Post(exec_at, JobsOwner(process_),
            [this, r, proven_until_ms] { ExecIfProven(r, proven_until_ms); });
  }
  w_.Spawned(*this);
  // The supervisor's deadline: SIGTERM to the group at the timeout.
  if (r->job.timeout < Millis(30 * 60 * 1000)) {
    SleepMono(r->job.timeout, [this, r] {
      if (!r->process_running || r->kill_scheduled) return;
      r->timed_out = true;
      if (r->truth >= 0) w_.HandlerStopRequested(r->truth);
      ScheduleKill(r);
    });
  }
}

// The child, just before exec: CLOCK_BOOTTIME of its host (the worker's
// clock) against the deadline it was handed. Past it, it exits unrun.
void SimWorker::ExecIfProven(std::shared_ptr<SimRun> r, int64_t deadline_ms) {
  if (!r->process_running) return;
  if (MonoUs() >= deadline_ms * kUsPerMs) {
    w_.trace().Line(w_.now(), "{}: job {}'s process finds its lease no longer proven (token {}); "
                    "exits unrun", info_.name, r->job.id, r->job.lease_token);
    w_.CountExecRefused();
    r->started = false;  // as src: it did not run (no job time)
    return ProcessGone(r, Failure(*r, ErrorKind::kLost));
  }
  BeginWork(r);
}

// A group signalled before its exec dies unrun.
void SimWorker::BeginWork(std::shared_ptr<SimRun> r) {
  if (!r->process_running || r->working || r->kill_scheduled) return;
  r->working = true;
  r->truth = w_.HandlerStarted(*this, r->job.id, r->job.lease_token);
  r->work_left = r->script.duration;
  r->work_since = w_.now();
  r->checkpoint_left = r->script.checkpoint ? r->script.duration / 2 : -1;
  ScheduleWork(r);
}

// The job's process works while its host runs: one event at its next
// milestone (the checkpoint, or its end), re-planned after a freeze.
void SimWorker::ScheduleWork(std::shared_ptr<SimRun> r) {
  if (!r->process_running) return;
  const uint64_t gen = ++r->work_gen;
  const SimUs until = r->checkpoint_left >= 0 ? r->work_left - r->checkpoint_left : r->work_left;
  w_.Post(w_.now() + std::max<SimUs>(0, until), JobsOwner(process_),
          [this, r, gen] { WorkStep(r, gen); });
}

// In the job's process; its supervisor (the worker) reads fd 3 and reaps
// it in steps of its own.
void SimWorker::WorkStep(std::shared_ptr<SimRun> r, uint64_t gen) {
  if (gen != r->work_gen || !r->process_running) return;
  r->work_left -= w_.now() - r->work_since;
  r->work_since = w_.now();
  if (r->checkpoint_left >= 0 && r->work_left <= r->checkpoint_left) {
    r->checkpoint_left = -1;
    Soon([this, r] { CheckpointSubmit(r, r->job.attempt); });
    return ScheduleWork(r);
  }
  if (r->work_left <= 0) return ProcessGone(r, ExitOutcome(*r));
  ScheduleWork(r);
}

// `checkpoint JSON` on fd 3: the supervisor hands it to the job's
// CheckpointWriter and goes on (it never waits for the store). The writer
// saves one at a time with a fenced store call, the latest waiting one
// next; fenced off means the job must stop.
void SimWorker::CheckpointSubmit(std::shared_ptr<SimRun> r, int64_t value) {
  if (r->checkpoint_saving) {
    r->checkpoint_waiting = value;  // replaces one still waiting
    return;
  }
  CheckpointSave(std::move(r), value);
}

void SimWorker::CheckpointSave(std::shared_ptr<SimRun> r, int64_t value) {
  const JobRef ref{r->job.id, r->job.lease_token};
  r->checkpoint_saving = true;
  w_.Call<bool>(
      *this, "checkpoint",
      [ref, value](MemStore& s, TimeMs) -> Result<bool> { return s.JobCheckpoint(ref, value); },
      [this, r](Result<bool> saved) {
        r->checkpoint_saving = false;
        if (saved.has_value() && !*saved) RequestStop(r, Stop::kFence);
        if (r->checkpoint_waiting) {
          const int64_t next = *r->checkpoint_waiting;
          r->checkpoint_waiting.reset();
          return CheckpointSave(r, next);
        }
        // Finish(): the slot waited for this write to record the outcome.
        if (r->reaped && r->outcome) {
          JobOutcome o = std::move(*r->outcome);
          r->outcome.reset();
          FinishRun(r, std::move(o));
        }
      });
}

void SimWorker::RequestStop(const std::shared_ptr<SimRun>& r, Stop why) {
  if (why == Stop::kNone || r->stop != Stop::kNone) return;  // the first reason wins
  r->stop = why;
  if (r->process_running) {
    if (r->truth >= 0) w_.HandlerStopRequested(r->truth);
    ScheduleKill(r);
  }
}

// The supervisor signals the group (a fenced run gets SIGKILL at once); the
// processes are gone a moment later.
void SimWorker::ScheduleKill(std::shared_ptr<SimRun> r) {
  if (r->kill_scheduled || !r->process_running) return;
  r->kill_scheduled = true;
  r->kill_for_timeout = r->stop == Stop::kNone && r->timed_out;
  const SimUs latency = w_.rng().Range(0, FromMs(t_.max_kill_latency.count()));
  w_.Post(w_.now() + latency, process_, [this, r] {
    if (!r->process_running) return;
    ProcessGone(r, r->kill_for_timeout ? Failure(*r, ErrorKind::kTimeout)
                                       : Failure(*r, KindFor(r->stop)));
  });
}

// How the job's process ended by itself.
JobOutcome SimWorker::ExitOutcome(const SimRun& r) const {
  if (r.script.end == AttemptScript::End::kSuccess) {
    JobOutcome o;
    o.ref = JobRef{r.job.id, r.job.lease_token};
    o.success = true;
    return o;
  }
  // We were stopping it and it exited non-zero: that is the outcome.
  if (r.stop != Stop::kNone) return Failure(r, KindFor(r.stop));
  const bool crash = r.script.end == AttemptScript::End::kCrash;
  return Failure(r, crash ? ErrorKind::kCrash : ErrorKind::kError);
}

// The process group is gone (ground truth now); its supervisor, a thread
// of the worker, sees it in a step of its own.
void SimWorker::ProcessGone(std::shared_ptr<SimRun> r, JobOutcome outcome) {
  r->process_running = false;
  ++r->work_gen;
  if (r->truth >= 0) w_.HandlerEnded(r->truth);
  std::erase(job_processes_, r);
  r->outcome = std::move(outcome);
  Soon([this, r] { Reap(r); });
}

// CheckpointWriter::Finish: the outcome is recorded after the last
// checkpoint is written or refused.
void SimWorker::Reap(std::shared_ptr<SimRun> r) {
  r->reaped = true;
  if (r->checkpoint_saving) return;
  JobOutcome o = std::move(*r->outcome);
  r->outcome.reset();
  FinishRun(r, std::move(o));
}

void SimWorker::FinishRun(std::shared_ptr<SimRun> r, JobOutcome outcome) {
  r->finished = true;
  w_.trace().Line(w_.now(), "{}: job {} token {} outcome {}", info_.name, r->job.id,
                  r->job.lease_token,
                  outcome.success ? "success" : ErrorKindName(outcome.error.kind));
  CompleterAdd(std::move(outcome), r->lease, !r->job.concurrency_key.empty());
  // A later attempt of the same job may have been claimed meanwhile: remove
  // only our own entry.
  auto it = running_.find(r->job.id);
  if (it != running_.end() && it->second == r) running_.erase(it);
  std::erase(held_, r);
  if (r->in_slot) {
    r->in_slot = false;
    --busy_slots_;
    // Only jobs that ran: one handed back unstarted says nothing of how
    // long jobs take.
    if (r->started) {
      job_us_avg_ = Smooth(job_us_avg_, static_cast<double>(MonoUs() - r->slot_taken_us));
    }
    TakeQueued();
  }
  WakeClaimLoop();
}

// --- Completer ---

void SimWorker::CompleterAdd(JobOutcome o, Millis give_up_after, bool keyed) {
  pending_.push_back(Pending{std::move(o), MonoMs() + give_up_after.count(), keyed});
  CompleterKick();
}

void SimWorker::CollectUnsettled(std::unordered_set<JobId>& ids) const {
  for (const Pending& p : pending_) ids.insert(p.outcome.ref.id);
  for (const Pending& p : in_flight_) ids.insert(p.outcome.ref.id);
}

void SimWorker::CompleterKick() {
  if (completer_busy_ || pending_.empty()) return;
  completer_busy_ = true;
  // Let a batch gather, unless it is already large or we are stopping.
  if (!completer_stop_ && pending_.size() < kMaxBatch && t_.flush_window.count() > 0) {
    return SleepMono(t_.flush_window, [this] { CompleterFlush(); });
  }
  Soon([this] { CompleterFlush(); });
}

void SimWorker::CompleterFlush() {
  const size_t n = std::min(pending_.size(), kMaxBatch);
  in_flight_.assign(std::make_move_iterator(pending_.begin()),
                    std::make_move_iterator(pending_.begin() + static_cast<std::ptrdiff_t>(n)));
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  std::vector<JobOutcome> outcomes;
  for (const Pending& p : in_flight_) outcomes.push_back(p.outcome);
  const WorkerId id = id_;
  w_.Call<std::vector<bool>>(
      *this, "finish",
      [id, outcomes = std::move(outcomes)](MemStore& s, TimeMs now) -> Result<std::vector<bool>> {
        return s.JobFinishMany(id, outcomes, now);
      },
      [this](Result<std::vector<bool>> r) {
        if (r.has_value()) {
          completer_backoff_ = Millis(10);
          bool keyed = false;
          for (size_t i = 0; i < in_flight_.size(); ++i)
            keyed = keyed || ((*r)[i] && in_flight_[i].keyed);
          in_flight_.clear();
          if (keyed) w_.NotifyWorkers();  // a concurrency key is free
          completer_busy_ = false;
          return CompleterKick();
        }
        // Transient (every error here is): keep what may still matter, in
        // order; once stopping, drop what is past its give-up time.
        const int64_t now = MonoMs();
        for (auto it = in_flight_.rbegin(); it != in_flight_.rend(); ++it) {
          if (!completer_stop_ || it->give_up_at_ms > now) {
            pending_.push_front(std::move(*it));
          } else {
            dropped_.emplace(it->outcome.ref.id, it->outcome.ref.lease_token);
          }
        }
        in_flight_.clear();
        const Millis wait = completer_backoff_;
        completer_backoff_ = std::min(completer_backoff_ * 2, Millis(1000));
        SleepMono(wait, [this] {
          completer_busy_ = false;
          CompleterKick();
        });
      });
}

}  // namespace warden::sim
