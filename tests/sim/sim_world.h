// World: one simulated run. It owns the scheduler, the in-memory store, the
// worker processes (one SimWorker per incarnation), the network between
// them, the faults, and the ground truth the checks compare the store with:
// which handlers really run where (RunTruth).
//
// The network. A store call is a request that reaches the store some time
// after it is sent (its effect is applied then, judged by the store's
// clock), and a reply that reaches the caller some time later. Either may
// be slow; on PostgreSQL either may be lost (a partition, a flaky link),
// and a caller whose reply has not come by its timeout (tcp_user_timeout /
// busy_timeout) gets a transient error, whether or not the effect was
// applied. On SQLite the call runs in the caller's process: it waits for
// the write lock (its effect applied when it gets it, or never, failing
// after the busy timeout), it freezes and dies with its process, and its
// reply is never lost.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "event_queue.h"
#include "invariants.h"
#include "mem_store.h"
#include "prng.h"
#include "scenario.h"
#include "sim_options.h"
#include "trace.h"

namespace warden::sim {

class SimWorker;

// How one attempt of a job behaves once its handler runs.
struct AttemptScript {
  SimUs duration = 0;
  bool checkpoint = false;  // writes one checkpoint half-way
  enum class End { kSuccess, kError, kCrash } end = End::kSuccess;
};

struct RunResult {
  bool ok = true;
  std::string violation;  // the first invariant broken, with its evidence
  SimUs at = 0;           // when
  int64_t steps = 0;
  SimUs sim_time = 0;
  std::vector<std::string> trace;  // when RunOptions::trace
  std::string scenario;            // Scenario::Describe()
  // Diagnostics, not invariants.
  int self_fenced = 0;
  int rescued = 0;        // jobs the store took from their holder
  int claimed_ahead = 0;  // jobs claimed beyond their worker's free slots
  int exec_refused = 0;   // job processes that found their deadline past at exec
  int clock_steps = 0;    // steps of the store's wall clock taken
  int waiting_on_clock = 0;  // jobs left waiting for a run_at a step put off
};

class World final : public StoreObserver {
 public:
  explicit World(const RunOptions& options);
  ~World() override;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  RunResult Run();

  // --- For the worker model ---
  SimUs now() const { return now_; }
  // The store's wall clock: true time, stepped by the scenario's clock steps.
  TimeMs StoreNow() const;
  const Scenario& scenario() const { return sc_; }
  const RunOptions& options() const { return opt_; }
  Trace& trace() { return trace_; }
  Rng& rng() { return rng_; }
  void Post(SimUs at, int owner, std::function<void()> fn) { q_.Post(at, owner, std::move(fn)); }

  // A store call from `w` (see the header comment). `apply` runs against the
  // store when the request arrives; `done` runs in the caller's process
  // with the reply or a transient error.
  template <typename T>
  void Call(SimWorker& w, const char* what, std::function<Result<T>(MemStore&, TimeMs)> apply,
            std::function<void(Result<T>)> done);

  AttemptScript ScriptFor(JobId job, int attempt) const;
  // Ground truth: the handler of (job, token) starts / stops on `w`.
  int HandlerStarted(SimWorker& w, JobId job, int64_t token);
  void HandlerEnded(int truth);
  void HandlerStopRequested(int truth);
  bool ProcessGone(int process) const;  // for proofs of death on one host
  void NotifyWorkers();                 // wake-ups: rescued, freed or new jobs
  void WorkerRegistered(SimWorker& w);
  // PostgreSQL: the keepalive lease of `process`'s session, as the server
  // has it (tcp_keepalives_idle of its connection); never shortened.
  void SessionKeepAliveSet(int process, Millis lease);
  void CountSelfFence(const SimWorker& w, JobId job, Millis lease);
  void CountClaimedAhead(int jobs) { stats_.claimed_ahead += jobs; }
  void CountExecRefused() { ++stats_.exec_refused; }
  // `w` has just spawned a job's process: a worker pause armed for this
  // moment (FaultPlan::at_spawn) stops it now.
  void Spawned(SimWorker& w);
  // A supervisor (systemd) starts the worker again once its process is gone.
  void RestartWhenGone(int plan, int process);

  // --- StoreObserver ---
  void OnAcceptedWrite(const char* what, const MemJob& job, int64_t named_token,
                       int64_t current_token) override;
  void OnTakenAway(const MemJob& job, int64_t token, const char* why) override;
  void OnClaimed(const MemJob& job) override;
  void OnLeaseRenewed(const MemJob& job) override;
  void OnRunAtSet(const MemJob& job, Millis delay) override;
  void OnWorkerGone(const MemWorker& w) override;

  // --- For the checks ---
  MemStore& store() { return store_; }
  const std::vector<std::unique_ptr<SimWorker>>& processes() const { return procs_; }
  const std::vector<RunTruth>& runs() const { return runs_; }
  SimWorker* ProcessOfWorkerId(WorkerId id) const;
  bool Healthy(const SimWorker& w) const;
  bool CutOff(const SimWorker& w) const;  // inside a partition now
  // True time, whatever the store's clock did: when the running job's lease
  // was last written (claim or heartbeat) and when it runs out (that plus
  // the attempt's lease), when it was claimed.
  SimUs LeaseWritten(const MemJob& j) const { return lease_written_[j.id - 1]; }
  SimUs LeaseExpiry(const MemJob& j) const {
    return LeaseWritten(j) + FromMs(j.active_lease_ms);
  }
  SimUs ClaimedAt(const MemJob& j) const { return claimed_at_[j.id - 1]; }
  // Its lease was last written by its claim, not yet by a heartbeat.
  bool LeaseByClaim(const MemJob& j) const { return lease_by_claim_[j.id - 1] != 0; }
  // When the worker row stopped being live (dead or stopped); -1: live.
  SimUs WorkerGoneAt(WorkerId id) const;
  // A scheduled or retryable job whose delay has passed in true time but
  // whose run_at the store's clock, stepped back since, has not reached:
  // it waits for its moment (DESIGN.md, "Time": run_at names a moment).
  bool WaitsOnSteppedClock(const MemJob& j) const;
  std::string ClockStepsSoFar() const;  // "" when none
  void Fail(std::string violation);

 private:
  struct Fate {
    bool lost = false;
    bool busy = false;  // fails at once, without effect
    SimUs delay = 0;
  };
  Fate NetFate(const SimWorker& w, SimUs at, bool request);
  bool InWindow(const std::vector<std::pair<SimUs, SimUs>>& windows, SimUs at,
                std::pair<SimUs, SimUs>* window = nullptr) const;
  void Dispatch(Event e);
  void StartProcess(int plan);
  void ApplyFault(const FaultPlan& f);
  // Pause, suspend, worker pause: `w` (and its jobs' processes, if
  // `with_jobs`) stops for `duration`.
  void Freeze(SimWorker& w, SimUs duration, bool with_jobs, const char* what);
  void ApplyOperator(const OperatorPlan& op);
  void EnqueueJob(int plan);
  void KillProcess(SimWorker& w, bool provable_at_once, const char* why);
  void NoteFaultStart(SimWorker& w, const FaultPlan& f);
  // PostgreSQL: `w`'s host is silent from `since` (for good if `until` < 0):
  // the server ends its session once its keepalive gives up, unless the
  // silence ends first (then the worker locks again).
  void DropSessionWhenSilent(SimWorker& w, SimUs since, SimUs until);
  void StepClock(const ClockStep& step);
  // Every job terminal, or waiting only for a moment a clock step put off.
  bool AllJobsFinished() const;

  RunOptions opt_;
  Scenario sc_;
  Trace trace_;
  Rng rng_;
  EventQueue q_;
  SimUs now_ = 0;
  MemStore store_;
  Checker checker_;
  std::vector<std::unique_ptr<SimWorker>> procs_;  // every incarnation ever started
  std::vector<int> current_;                       // plan -> its latest process, or -1
  std::vector<Millis> session_lease_;              // by process: see SessionKeepAliveSet
  std::vector<const FaultPlan*> pause_at_spawn_;   // by plan: armed worker pauses
  // Per plan: [from, to) windows; overlapping partitions merged into one.
  std::vector<std::vector<std::pair<SimUs, SimUs>>> partitions_, flaky_;
  int64_t store_offset_ms_ = 0;  // the clock steps so far
  std::vector<const ClockStep*> steps_taken_;
  std::vector<SimUs> lease_written_, claimed_at_, due_at_;  // by JobId - 1; see LeaseWritten
  std::vector<char> lease_by_claim_;                        // by JobId - 1
  std::map<WorkerId, SimUs> worker_gone_at_;
  std::vector<JobId> job_of_plan_;  // 0 until enqueued
  std::vector<int> plan_of_job_;    // JobId - 1 -> plan
  int enqueued_ = 0;
  bool store_changed_ = true;  // since AllJobsFinished was last asked
  std::vector<RunTruth> runs_;
  std::map<std::pair<JobId, int64_t>, SimUs> taken_at_;  // (job, token) -> when taken away
  std::optional<std::string> violation_;
  SimUs violation_at_ = 0;
  int64_t steps_ = 0;
  RunResult stats_;
};

}  // namespace warden::sim
