// SimWorker: one worker process (one incarnation) of the model, mirroring
// src/runtime: the claim loop (claiming ahead of its free slots for short
// jobs), `concurrency` slots taking the claimed jobs in order and running
// each as a command under a supervisor, the completer (batched, fenced outcomes,
// retried while the worker runs), the heartbeat loop (extends leases, stops
// jobs taken from it, registers again when declared dead), the watchdog
// (self-fencing each job at SelfFenceAfter from its claim or the start of
// the last heartbeat that confirmed it, on the worker's own monotonic
// clock), the sweeper loop (Maintainer::Pass: proofs of death on its host
// or by a lost session, heartbeats and the leader row watched by the real
// SilenceJudge on its own clock, the leader role, the sweep) and graceful
// shutdown.
//
// Each real thread is a chain of events: a blocking store call becomes a
// World::Call whose reply continues the chain, a sleep becomes a timer on
// the worker's monotonic clock. That clock (CLOCK_BOOTTIME) runs at
// (1 + drift_ppm/1e6) times true time, frozen or suspended hosts included.
// A job's process is a chain of its own (World::JobsOwner): it runs on
// while the worker alone is stopped, and stops with its whole host.
#pragma once

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_set>
#include <vector>

#include "core/lost_claims.h"
#include "core/silence.h"
#include "scenario.h"
#include "sim_world.h"
#include "store/store.h"

namespace warden::sim {

// env/stop_signal.h's StopReason: why a job is being stopped.
enum class Stop { kNone, kCancel, kFence, kShutdown };

// runtime/worker_impl.h's RunningJob, plus the job's process.
struct SimRun {
  JobInfo job;
  Millis lease{0};
  WorkerId worker = 0;           // the registration it was claimed under
  int64_t claim_start_mono = 0;  // ms, before the claim was sent
  // ms: start of the last heartbeat whose reply listed this job with its
  // token (under the job's registration); 0 until one did.
  int64_t confirmed_mono = 0;
  bool finished = false;    // ran; its outcome is being recorded
  Stop stop = Stop::kNone;  // first request wins
  Millis mark_backoff{20};
  // Its slot: since when (worker's clock, µs), and whether it passed the
  // start gate (RunningJob::started_mono != 0).
  bool in_slot = false;
  int64_t slot_taken_us = 0;
  bool started = false;
  // The job's process group, under its supervisor: spawned, then at work
  // once its process begins (exec, and before the fix its stdin).
  AttemptScript script;
  int truth = -1;  // World's RunTruth once at work
  bool process_running = false;  // spawned and not yet gone
  bool working = false;
  bool exec_done = false, stdin_written = false;  // start_needs_worker only
  bool reaped = false;  // its supervisor saw it end
  SimUs work_left = 0;  // true time still to run (frozen with its host)
  SimUs work_since = 0;
  SimUs checkpoint_left = -1;  // writes its checkpoint when work_left reaches this
  uint64_t work_gen = 0;
  bool kill_scheduled = false;
  bool kill_for_timeout = false;
  bool timed_out = false;
  // Its CheckpointWriter: one save in flight, the latest one waiting.
  bool checkpoint_saving = false;
  std::optional<int64_t> checkpoint_waiting;
  std::optional<JobOutcome> outcome;  // the process ended; recorded once the writer is done

  // What self-fencing measures from: the last time the store is known to
  // have extended this job's lease.
  int64_t lease_base_mono() const { return std::max(claim_start_mono, confirmed_mono); }
};

class SimWorker {
 public:
  SimWorker(World& world, int process, int plan, const WorkerPlan& info);

  // --- Process control, by the world's faults ---
  void Start();  // `warden worker`: recover, register, run
  // SIGSTOP / frozen VM / suspended host; `with_jobs` false: SIGSTOP of the
  // worker's pid alone, its jobs' processes (and their shims) run on.
  void Freeze(bool with_jobs);
  void Thaw();
  void Kill();                           // the process (and its jobs' processes) is gone
  void Terminate();                      // SIGTERM: graceful shutdown
  void Wake();                           // a wake-up datagram / NOTIFY
  void WatchedProcessDied(int process);  // a pidfd this worker watches became readable

  // --- State, for the world and the checks ---
  int process() const { return process_; }
  int plan() const { return plan_; }
  const WorkerPlan& info() const { return info_; }
  WorkerId id() const { return id_; }
  bool alive() const { return started_ && !dead_ && !exited_; }  // the process exists
  bool dead() const { return dead_; }
  bool exited() const { return exited_; }
  bool frozen() const { return frozen_; }            // its threads are stopped
  bool jobs_frozen() const { return jobs_frozen_; }  // ...and its jobs' processes
  bool stopping() const { return stopping_; }
  bool threads_done() const { return threads_done_; }  // its loops (heartbeats) have ended
  bool registered() const { return id_ != 0; }
  SimUs last_thaw() const { return last_thaw_; }
  SimUs started_at() const { return anchor_true_; }  // its judge watches from then
  // A claim sent at or before `t` still waits for its reply.
  bool ClaimInFlightSince(SimUs t) const { return claim_in_flight_ && claim_sent_at_ <= t; }
  // The worker knows it holds (job, token): running it or recording its outcome.
  bool Knows(JobId job, int64_t token) const;
  std::vector<Event>& deferred() { return deferred_; }
  // Store calls this process waits for: their ids and when they were sent.
  uint64_t CallBegin();
  void CallEnd(uint64_t call);
  SimUs OldestCall() const;  // -1 when none

  int64_t MonoUs() const;
  int64_t MonoMs() const { return MonoUs() / 1000; }
  SimUs TrueWhenMono(int64_t mono_us) const;

 private:
  // Timers on this worker's clock; `fn` runs in this process.
  void SleepMono(Millis d, std::function<void()> fn);
  void Soon(std::function<void()> fn);  // this process, now
  bool ShouldFence(int64_t now_ms, int64_t base_ms, Millis lease) const;
  // Until when (ms, this worker's clock) it can prove the job's lease is its
  // own: 0 if claimed under a registration since replaced, else the
  // self-fencing instant. A job may start only before it.
  int64_t LeaseProvenUntil(const SimRun& r) const;
  bool LeaseMayBeGone(const SimRun& r) const { return MonoMs() >= LeaseProvenUntil(r); }

  // worker.cc
  void TimerAt(int64_t deadline_mono_us, std::function<void()> fn);
  void Recover();
  void RecoverNext(std::vector<WorkerLiveness> same_name, size_t i, int tries);
  void StartupFailed(const std::string& why);
  void Register(std::function<void(bool)> then);
  void StartThreads();
  // sim_claim_loop.cc
  void ClaimStep();
  void ClaimReceived(std::vector<JobInfo> claimed, WorkerId worker, int64_t start_ms,
                     int slots_free);
  void ClaimWait(Millis d, bool poll);
  void ClaimPoll(Millis wait);
  void WakeClaimLoop();
  void TakeQueued();  // free slots take the queued jobs, oldest first
  void StopAll(Stop why);
  void Shutdown();
  void ShutdownWait(int64_t deadline_ms);
  void ShutdownReleased();
  void Exit();

  // executor.cc: one slot running one job.
  void Execute(std::shared_ptr<SimRun> r);
  void MarkStarted(std::shared_ptr<SimRun> r);
  void StartIfHeld(std::shared_ptr<SimRun> r);
  void Spawn(std::shared_ptr<SimRun> r, int64_t proven_until_ms);
  void ExecIfProven(std::shared_ptr<SimRun> r, int64_t deadline_ms);
  void BeginWork(std::shared_ptr<SimRun> r);
  void ScheduleWork(std::shared_ptr<SimRun> r);
  void WorkStep(std::shared_ptr<SimRun> r, uint64_t gen);
  void CheckpointSubmit(std::shared_ptr<SimRun> r, int64_t value);
  void CheckpointSave(std::shared_ptr<SimRun> r, int64_t value);
  void RequestStop(const std::shared_ptr<SimRun>& r, Stop why);
  void ScheduleKill(std::shared_ptr<SimRun> r);
  JobOutcome ExitOutcome(const SimRun& r) const;
  void ProcessGone(std::shared_ptr<SimRun> r, JobOutcome outcome);
  void Reap(std::shared_ptr<SimRun> r);
  void FinishRun(std::shared_ptr<SimRun> r, JobOutcome outcome);

  // completer.cc
  struct Pending {
    JobOutcome outcome;
    int64_t give_up_at_ms = 0;
    bool keyed = false;
  };
  void CompleterAdd(JobOutcome o, Millis give_up_after, bool keyed);
  void CompleterKick();
  void CompleterFlush();
  // Adds the jobs whose outcome waits or is being written.
  void CollectUnsettled(std::unordered_set<JobId>& ids) const;

  // worker_loops.cc
  void HeartbeatStep();
  void HeartbeatSleep(int64_t start_ms);
  void HeartbeatWake();
  void ReleaseLostClaims(const HeartbeatStart& at_start, const std::map<JobId, int64_t>& held);
  void SessionKeepAlive();
  void WatchdogArm();
  void WatchdogTick();
  void SweepStep();
  void StampSightings();
  void SweepProofs(std::vector<WorkerLiveness> live);
  void SweepDeclare(std::vector<WorkerId> ids, size_t i, std::function<void(bool)> then);
  void SweepLeader();
  void SweepLed(int64_t start_ms, bool acquired);
  void SweepMaintain();
  void SweepMarkSilent(const std::vector<WorkerLiveness>& silent, std::function<void()> then);
  void SweepRescue(const std::vector<LeaseRow>& silent);
  void SweepExpire(int rescued);
  void SweepDone();
  void SweepWait();
  void SweepFailed();

  World& w_;
  const int process_;
  const int plan_;
  const WorkerPlan info_;
  const Timings& t_;

  // Clock: mono_us = anchor_mono_ + (now - anchor_true_) * (1e6 + ppm) / 1e6.
  const SimUs anchor_true_;
  const int64_t anchor_mono_us_;

  bool started_ = false, dead_ = false, exited_ = false, frozen_ = false, jobs_frozen_ = false;
  SimUs last_thaw_ = -1;
  std::vector<Event> deferred_;  // events that came while frozen
  std::vector<std::pair<uint64_t, SimUs>> calls_;
  uint64_t next_call_ = 0;

  WorkerId id_ = 0;
  std::map<JobId, std::shared_ptr<SimRun>> running_;    // held: queued or in a slot
  std::vector<std::shared_ptr<SimRun>> held_;           // claimed, outcome not yet produced
  std::deque<std::shared_ptr<SimRun>> queue_;           // claimed, waiting for a slot
  int busy_slots_ = 0;
  std::vector<std::shared_ptr<SimRun>> job_processes_;  // spawned, not yet gone
  bool stopping_ = false;
  bool threads_done_ = false;

  // Claim loop.
  Millis claim_backoff_{50};
  bool gathered_ = false;
  bool claim_in_flight_ = false;
  SimUs claim_sent_at_ = 0;
  int64_t claim_sent_mono_ = 0;  // the worker's clock, as src/ records it
  // Recent averages (µs) of a claim's round trip and of a started job's
  // time in its slot: how many to claim ahead (core/claim_ahead.h).
  double claim_us_avg_ = 0;
  double job_us_avg_ = 0;
  LostClaimDetector lost_claims_;
  // Every (job, token) a claim's reply delivered, and those whose outcome the
  // completer gave up on while stopping: only the latter may be handed back
  // as a lost claim (checked in ReleaseLostClaims).
  std::set<std::pair<JobId, int64_t>> delivered_, dropped_;
  bool waiting_ = false;       // in a wait Stop wakes
  bool waiting_poll_ = false;  // ...which a wake-up datagram also ends
  bool pending_wake_ = false;  // the eventfd holds a wake-up
  uint64_t wait_gen_ = 0;

  // Completer.
  std::deque<Pending> pending_;
  std::vector<Pending> in_flight_;
  bool completer_busy_ = false;
  bool completer_stop_ = false;
  Millis completer_backoff_{10};

  // Heartbeat loop: asleep until the last heartbeat's start + the interval
  // (heartbeat_cv_ wakes it to recompute when a shorter lease comes in).
  bool heartbeat_sleeping_ = false;
  int64_t heartbeat_start_ms_ = 0;
  uint64_t heartbeat_gen_ = 0;

  // Session loop (PostgreSQL): the keepalive lease last asked of the server
  // (PgSession::lease_, never shortened), and a SET on its way.
  Millis session_lease_{0};
  bool session_setting_ = false;

  // Watchdog.
  bool watchdog_armed_ = false;
  int64_t watchdog_origin_us_ = 0;

  // Sweeper (Maintainer): the real judge, on this worker's clock; the live
  // workers as read at the start of the pass under way.
  SilenceJudge judge_;
  std::vector<WorkerLiveness> pass_live_;
  bool leader_ = false;
  int64_t renew_at_ms_ = 0;
  std::set<int> watched_;  // processes whose pidfd this worker holds
  bool already_gone_ = false;
  bool sweep_waiting_ = false;
  uint64_t sweep_gen_ = 0;
};

}  // namespace warden::sim

// World::Call needs SimWorker's clock: defined here, where both are complete.
#include "sim_world_call.h"
