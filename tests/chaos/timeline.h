// The checker's internals: the ledger's runs, which process each store
// worker id was, which faults hit it when, and the recovery-time check.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "checker.h"
#include "overlap.h"

namespace chaos {

// One run of one attempt as the ledger saw it.
struct Run {
  int64_t job = 0;
  int attempt = 0;
  int64_t token = 0;
  int64_t worker = 0;
  int pid = 0;
  int64_t start = -1;  // -1: no start line (should not happen)
  int64_t last = -1;   // its last side effect: the latest start/tick/ckpt
  int start_step = 0;
  int max_tick = 0;
  std::string end;  // end detail, "" if it never wrote one (killed)
  std::vector<int> ticks;
  std::vector<int> committed_ckpts;  // in-process runs: saved for sure
  std::vector<int64_t> times;        // every start, tick and ckpt
};
using RunKey = std::pair<int64_t, int64_t>;  // job, lease token

std::map<RunKey, Run> BuildRuns(const std::vector<LedgerEvent>& ledger,
                                const std::vector<PlannedJob>& workload,
                                const std::map<int64_t, int>& index_of_job);

class Timeline {
 public:
  explicit Timeline(const CheckInput& in);

  // The process a store worker id ran in; nullptr if none matches.
  const ProcRecord* ProcOfWorker(int64_t worker_id) const;
  // Store worker ids that process `pid` had registered at `at` (wall ms).
  std::vector<int64_t> WorkerIdsOf(pid_t pid, int64_t at) const;
  // Why activity at `t` of a run on `worker_id` may come after its attempt
  // ended (its worker was frozen then, or had just died); "" if nothing
  // excuses it. *late_ms: how long after the thaw or death it was.
  std::string StaleExcuse(int64_t worker_id, int64_t t, int64_t* late_ms) const;
  // Why a run whose first line (`start`) came at `t`, after its attempt
  // ended at `ended`, may still have begun (exec'd) in time; "" otherwise:
  // every other late start is a violation, with no margin. Two excuses:
  //  - a host freeze stopped that very process (`pid`) after it had
  //    exec'd (past warden's start check); its first line may come up to
  //    --stale-margin after the thaw;
  //  - its worker (`worker_id`) died at or before `ended` (the death ended
  //    the attempt) and at or before `t`, at most --stale-margin before:
  //    a job's process checks just before exec that its worker lives, and
  //    a death is proven only after the worker's files close, so it
  //    exec'd before the death; a few milliseconds pass between exec and
  //    its first line, and the store ends the attempt that fast. (This
  //    trusts that check; tests/start_gate tests it.)
  // A run's start is when its code began (the handler's entry, the
  // command's main), not when its line was written: a freeze between the
  // two does not make it late.
  std::string LateStartExcuse(int64_t worker_id, int pid, int64_t t, int64_t ended) const;
  // The store was unavailable during these (wall ms) windows.
  const std::vector<std::pair<int64_t, int64_t>>& outages() const {
    return outages_;
  }
  const std::string& WorkerName(int64_t worker_id) const;
  // Whether process `pid` held the maintenance leader's role at `at` (wall
  // ms), as its log says ("now the maintenance leader" until "no longer
  // the maintenance leader" or its end).
  bool WasLeader(pid_t pid, int64_t at) const;

  struct LeaderSpan {
    pid_t pid = 0;
    int64_t from = 0, to = 0;
  };
  // The first leadership taken at or after `at`; nullptr if none.
  const LeaderSpan* LeaderFrom(int64_t at) const;
  // Since when process `pid` has watched the store without a break, as of
  // `at`: its current registration (a worker declared dead registers
  // again), the end of a freeze that stopped it, the end of a partition
  // that cut it off or of a store outage, each + `reconnect` (the
  // workers' reconnect backoff is capped at 2 s). Silence is judged only
  // while watched (core/silence.h): what a worker could not see, it must
  // watch again for a whole lease.
  int64_t WatchingSince(pid_t pid, int64_t at, int64_t reconnect) const;

 private:
  const CheckInput& in_;
  std::map<int64_t, const warden::WorkerInfo*> workers_;
  std::vector<std::pair<int64_t, int64_t>> outages_;
  std::vector<LeaderSpan> leaders_;
};

// Invariant 5 (recovery_times.cc): one row per worker fault kind.
void CheckRecoveryTimes(const CheckInput& in, const Timeline& tl,
                        std::vector<RecoveryRow>* rows, Invariant* inv);

// For evidence lines.
std::string Clock(int64_t ms);  // HH:MM:SS.mmmZ
const warden::AttemptInfo* AttemptByToken(const warden::JobInfo& j, int64_t token);
std::string DescribeRun(const Run& r, const Timeline& tl);
std::string DescribeAttempt(const warden::AttemptInfo& a, const Timeline& tl);

// A capacity check (capacity.cc): at most `limits[key]` executions of one
// key alive at once, judged from what really ran (the ledger's runs, each
// from its first to its last sign of life) and from the store's attempts
// (claimed .. finished), by the overlap counting of overlap.h. Flow
// control's concurrency limit is one (key: the job's queue; invariant 7);
// node capacity is another (key: the node of the run's worker; 8).
struct CapacityCheck {
  std::string what;  // "queue", "node": names a key in evidence
  std::map<std::string, Limit> limits;  // each over time (a node resized)
  // A run's or an attempt's key; "" (or a key without a limit): not counted.
  std::function<std::string(const Run&)> key_of_run;
  std::function<std::string(const warden::JobInfo&, const warden::AttemptInfo&)>
      key_of_attempt;
};

struct CapacityLoads {
  std::map<std::string, KeyLoad> ledger, store;
  // Ledger moments over a limit only with stale runs counted: how many,
  // the longest, the most runs alive at once in one.
  int stale_overlaps = 0;
  int64_t stale_overlap_max_ms = 0;
  int stale_overlap_peak = 0;
};

// `stale_since`: the runs invariant 6 excused for activity after their
// attempt ended, with that end. Their activity after it is counted as
// stale (apart, a stale overlap, not a violation); every other run counts
// whole, as live. Store attempts get no excuse. Flags `inv` for every
// moment over a limit (the first few of each source, with their runs or
// attempts, as evidence) and
// describes the first stale overlaps in `inv->details`.
CapacityLoads CheckCapacity(const CheckInput& in, const Timeline& tl,
                            const std::map<RunKey, Run>& runs,
                            const std::map<RunKey, int64_t>& stale_since,
                            const CapacityCheck& check, Invariant* inv);

// Invariant 8 (node_checks.cc): node capacity, CheckCapacity keyed by the
// node of the run's (the attempt's) worker, and the nodes' sampled running
// jobs. Counts its stale overlaps in out->node_stale_overlaps.
Invariant CheckNodeCapacity(const CheckInput& in, const Timeline& tl,
                            const std::map<RunKey, Run>& runs,
                            const std::map<RunKey, int64_t>& stale_since, CheckResult* out);
// What node faults must leave true (node_checks.cc): no attempt claimed on
// a node while a fault had it take no work (from the closing call's return
// to the reopening's first try); no drain release sooner than
// --shutdown-timeout after its node's closing was sent. Its note counts the
// node faults, the jobs drains released and those forced removals
// recovered.
Invariant CheckNodeFaults(const CheckInput& in, const Timeline& tl);

}  // namespace chaos
