// Checker: the invariants of DESIGN.md ("What must stay true"), checked
// after every step of a run and once at its end, against the store and
// against the ground truth of which handlers really run.
//
//  (1) none lost, none stuck: at the end every job is terminal; during the
//      run a running job's lease is live or being recovered (no lease left
//      unrenewed for its length, in true time since the leader could watch
//      it, outlives the sweeper's reach; the store's wall clock plays no
//      part), and a running job is known to the healthy worker that holds it.
//  (2) at most one committed completion per job, and every accepted write
//      about a job names its current lease token (fencing).
//  (3) no at-most-once handler starts twice without an operator's retry.
//  (4) at most one running job per concurrency_key, in the store and among
//      the handlers that really run.
//  (5) recovery bounds: a job held by a worker whose death is provable is
//      recovered within sweep_interval + margin; held by a worker frozen,
//      cut off or lost without proof, within lease + 2 x sweep_interval +
//      margin (silence is judged by watching: the verdict comes up to a pass
//      after the renewal is first seen, core/silence.h).
//  (6) a handler does not run on past its lease in the store, nor after the
//      store took the job from it (rescued, or claimed again), while its
//      worker can act: its worker stopped it before, or was frozen then and
//      stops it the moment it runs again. One that *starts* (its process
//      begins its work) past its lease or after the store took the job is
//      always a violation, checked against the store at that moment.
//  (time) the store's wall clock steps (either way, by up to hours), and
//      no step gets a worker that stays healthy (heartbeating; not frozen,
//      killed or cut off) declared dead, nor its running jobs taken from it
//      (an at-most-once one would go to dead). Checked whatever the clock did.
//      A scheduled or retryable job whose run_at a step put off waits for it
//      (run_at names a moment): not stuck at the end.
//  (7) no needless self-fencing (liveness, beyond DESIGN.md): a worker whose
//      store answered all its calls for a whole lease does not fence a job
//      itself (the heartbeats confirm each job's lease in time, however
//      short; each such loss would count against max_crashes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario.h"
#include "warden/job.h"

namespace warden::sim {

class World;
class SimWorker;
struct MemJob;
struct MemWorker;

// Why the store took a job whose lease was judged silent (JobRescueSilent).
inline constexpr const char* kLeaseSilent = "lease silent";

// One run of a handler, as it really happened.
struct RunTruth {
  JobId job = 0;
  int64_t token = 0;
  int process = 0;
  std::string concurrency_key;
  bool at_most_once = false;
  SimUs started = 0;
  SimUs ended = -1;           // -1 while its process runs it
  SimUs superseded = -1;      // when the store took the job from this token
  SimUs stop_requested = -1;  // when its worker decided to kill it
};

class Checker {
 public:
  explicit Checker(World& world) : w_(world) {}

  void AfterStep();
  void AtEnd();

  void JobAdded();
  void HandlerStarted(const RunTruth& run);
  void AcceptedWrite(const char* what, JobId job, int64_t named, int64_t current);
  void OperatorRetried(JobId job);
  void SelfFenced(const SimWorker& w, JobId job, Millis lease);
  // The store declared or presumed a worker dead / took a job from its
  // holder (the store's row already changed): checks (time).
  void WorkerGone(const MemWorker& row);
  void TakenAway(const MemJob& job, const char* why);
  // A fault hit `w` at now: each job its worker holds must be recovered by
  // `due` (if the fault still lasts then).
  // `fault_end`: when the fault stops keeping the worker out (a thaw, a
  // healed partition; -1: never, the process is gone).
  void ExpectRecovery(const SimWorker& w, SimUs due_after_lease, SimUs due_fixed, SimUs fault_end,
                      const std::string& what);

  // Grace after a frozen worker thaws: its watchdog's next tick, plus the
  // time to kill a job's process group.
  SimUs ThawGrace() const;
  SimUs KillLatency() const;
  SimUs Margin() const;
  // Silence judged by watching: 2 sweep intervals + margin after a lease.
  SimUs RecoveryAfterLease() const;
  // Healthy now, and without a break since `since`.
  bool HealthyThroughout(const SimWorker& p, SimUs since) const;

 private:
  void CheckStore();
  void CheckRuns();
  void CheckDeadlines();
  bool HelperThroughout(const SimWorker& dead, SimUs since, bool same_host_only) const;
  // Healthy as of the last step, and without a break since `since`.
  bool WasHealthySince(int process, SimUs since) const;
  std::string ClockSteps() const;
  // Since when the current leader has watched the running job's lease: from
  // when it was written, or from the leader's takeover when it could not
  // have watched it before.
  SimUs WatchedFrom(const MemJob& j) const;

  World& w_;
  std::vector<int> completions_;     // by JobId - 1
  std::vector<int> amo_starts_;      // since the last operator retry
  std::vector<SimUs> orphan_since_;  // by job: held by a worker that does not know it
  std::vector<int64_t> orphan_token_;
  std::vector<SimUs> last_unhealthy_;  // by process
  std::vector<char> healthy_;          // by process, as of the last step
  SimUs last_no_healthy_ = 0;
  bool any_healthy_ = false;
  SimUs last_leader_unhealthy_ = -1;  // the leader lease was held by an unhealthy worker
  std::optional<WorkerId> leader_seen_;  // the holder of the leader lease, as of the last step
  SimUs leader_taken_at_ = -1;           // since when it holds it
  std::vector<SimUs> leader_unhealthy_;  // by process: the last time it was that worker
  struct Deadline {
    JobId job;
    int64_t token;
    int process;
    SimUs fault_at;
    SimUs fault_end;
    SimUs due;
    bool by_proof;
    bool extended;  // once, by a leader handover
    std::string what;
  };
  std::vector<Deadline> deadlines_;
  std::vector<int> active_;  // runs_ indices whose handler may still run
};

}  // namespace warden::sim
