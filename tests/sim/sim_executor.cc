// SimWorker: one slot running one job (runtime/executor.cc, the subprocess
// supervisor's stop/timeout handling) and the completer
// (runtime/completer.cc).
#include <algorithm>

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
  if (LeaseMayBeGone(*r)) RequestStop(r, Stop::kFence);
  if (r->stop != Stop::kNone) return FinishRun(r, Failure(*r, KindFor(r->stop)));
  StartProcess(r);
}

void SimWorker::StartProcess(std::shared_ptr<SimRun> r) {
  r->script = w_.ScriptFor(r->job.id, r->job.attempt);
  r->truth = w_.HandlerStarted(*this, r->job.id, r->job.lease_token);
  r->process_running = true;
  r->work_left = r->script.duration;
  r->work_since = w_.now();
  r->checkpoint_left = r->script.checkpoint ? r->script.duration / 2 : -1;
  job_processes_.push_back(r);
  ScheduleWork(r);
  // The supervisor's deadline: SIGTERM to the group at the timeout.
  if (r->job.timeout < Millis(30 * 60 * 1000)) {
    SleepMono(r->job.timeout, [this, r] {
      if (!r->process_running || r->kill_scheduled) return;
      r->timed_out = true;
      w_.HandlerStopRequested(r->truth);
      ScheduleKill(r);
    });
  }
}

// The job's process works while its host runs: one event at its next
// milestone (the checkpoint, or its end), re-planned after a freeze.
void SimWorker::ScheduleWork(std::shared_ptr<SimRun> r) {
  if (!r->process_running) return;
  const uint64_t gen = ++r->work_gen;
  const SimUs until = r->checkpoint_left >= 0 ? r->work_left - r->checkpoint_left : r->work_left;
  w_.Post(w_.now() + std::max<SimUs>(0, until), process_, [this, r, gen] { WorkStep(r, gen); });
}

void SimWorker::WorkStep(std::shared_ptr<SimRun> r, uint64_t gen) {
  if (gen != r->work_gen || !r->process_running) return;
  r->work_left -= w_.now() - r->work_since;
  r->work_since = w_.now();
  if (r->checkpoint_left >= 0 && r->work_left <= r->checkpoint_left) {
    r->checkpoint_left = -1;
    CheckpointSubmit(r, r->job.attempt);
    return ScheduleWork(r);
  }
  if (r->work_left <= 0) return EndProcess(r, /*killed=*/false);
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
        if (r->outcome) {
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
    w_.HandlerStopRequested(r->truth);
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
    if (r->process_running) EndProcess(r, /*killed=*/true);
  });
}

void SimWorker::EndProcess(std::shared_ptr<SimRun> r, bool killed) {
  r->process_running = false;
  ++r->work_gen;
  w_.HandlerEnded(r->truth);
  std::erase(job_processes_, r);
  JobOutcome o;
  if (killed) {
    o = r->kill_for_timeout ? Failure(*r, ErrorKind::kTimeout) : Failure(*r, KindFor(r->stop));
  } else if (r->script.end == AttemptScript::End::kSuccess) {
    o.ref = JobRef{r->job.id, r->job.lease_token};
    o.success = true;
  } else if (r->stop != Stop::kNone) {
    // We were stopping it and it exited non-zero: that is the outcome.
    o = Failure(*r, KindFor(r->stop));
  } else {
    o = Failure(
        *r, r->script.end == AttemptScript::End::kCrash ? ErrorKind::kCrash : ErrorKind::kError);
  }
  // CheckpointWriter::Finish: the outcome is recorded after the last
  // checkpoint is written or refused.
  if (r->checkpoint_saving) {
    r->outcome = std::move(o);
    return;
  }
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
  std::erase(slots_, r);
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
