// The checker: docs/design.md's invariants judged from what the store says (jobs
// and their attempts) and from what really ran (the ledger), against the
// faults the injector really carried out.
//
//   1  none lost, none stuck: every acknowledged job is in the store and
//      terminal once the run drained.
//   2  at most one committed completion per job, and it is a run the ledger
//      saw finish with that lease token.
//   3  no at-most-once job started twice (ledger runs).
//   4  at most one running attempt per concurrency key: the store's attempt
//      intervals never overlap, and neither do the ledger's runs (except a
//      stale run excused under 6).
//   5  recovery time of a killed worker's jobs (proven death) within
//      sweep + margin; of a frozen or cut-off worker's within lease + sweep
//      + margin. A fault whose recovery window meets a store outage is
//      measured from the end of the outage, with 2 s more (the reconnect
//      backoff's cap).
//   6  no run starts after its attempt ended (no margin; two excuses, for
//      a process that provably exec'd in time: one a host freeze stopped
//      after its exec, and one whose worker died first, see
//      Timeline::LateStartExcuse), and no run outlives its attempt: ledger
//      activity after the store ended the attempt is allowed only while its worker was frozen and
//      up to
//      --stale-margin after it thawed, or up to --stale-margin after its
//      worker died (the supervisor's kill is immediate but not
//      instantaneous). Stale command runs of a worker frozen alone
//      (SIGSTOP of the worker process only) are warden's documented limit
//      (docs/guarantees.md, "Limits of the guarantees"); a cut-off worker
//      gets no excuse (it must fence itself before its lease expires).
//   7  flow control: at most N of the limited queue's jobs running at once
//      (--limited-concurrency N), judged from the ledger (each run from its
//      first to its last sign of life; a run the store had already taken
//      back, whose activity 6 excused, counted apart as a stale overlap,
//      never as a violation alone), from the store's attempts (claimed ..
//      finished) and from the running jobs sampled during the run. The
//      counting is overlap.h's, by key with a limit per key (capacity.cc).
//   8  node capacity: at most C jobs running at once on a node of capacity
//      C, across its workers, judged as 7 with the node of the run's (the
//      attempt's) worker as the key, and from the nodes' running jobs
//      sampled during the run. A node-resize changes C while jobs run:
//      each start is judged by the C of its claim (overlap.h's Limit).
//   +  a node that takes no work gets none: no attempt claimed by a worker
//      of a node while a node fault had it disabled or removed; and a drain
//      releases a job only after its node took no work for the workers'
//      --shutdown-timeout.
//   +  every ledger run is a store attempt (same job, attempt, token and
//      worker); checkpoints never go backwards and come only from steps an
//      earlier attempt reached; no worker process died on its own or failed
//      to stop on SIGTERM; no process (a job) outlived the workers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fleet.h"
#include "injector.h"
#include "ledger.h"
#include "options.h"
#include "sampler.h"
#include "warden/job.h"
#include "workload.h"

namespace chaos {

struct CheckInput {
  const Options* options = nullptr;
  const std::vector<PlannedJob>* workload = nullptr;
  std::vector<int64_t> ids;  // per workload index; 0: not acknowledged
  std::vector<warden::JobInfo>
      jobs;  // every job of the run's queue, attempts filled
  std::vector<warden::WorkerInfo> workers;
  std::vector<LedgerEvent> ledger;
  std::vector<ProcRecord> procs;
  std::vector<FaultRecord> faults;
  bool drained = false;
  std::vector<std::string> unexpected_exits;  // workers that died on their own
  std::vector<std::string> late_stoppers;     // did not stop on SIGTERM in time
  std::vector<std::string>
      leftovers;  // processes still running after every worker stopped
  // Flow control (7): the limited queue and its concurrency limit ("", 0:
  // none), and its running jobs as the store counted them, sampled.
  std::string limited_queue;
  int64_t limit = 0;
  std::vector<FlowSample> flow_samples;
  int flow_sample_failures = 0;
  // Nodes (8): whether the workers ran on named nodes, the capacities, and
  // the running jobs of those nodes as the store counted them, sampled.
  bool nodes = false;
  std::map<std::string, int64_t> node_limits;
  std::vector<NodeSample> node_samples;
  int node_sample_failures = 0;
};

struct Invariant {
  explicit Invariant(std::string n) : name(std::move(n)) {}
  std::string name;
  bool ok = true;
  std::string note;                   // a summary line (counts)
  std::vector<std::string> evidence;  // offending jobs, first ones
  std::vector<std::string> details;   // what was excused, first ones
  int violations = 0;
  // A violation: not ok, counted, and `line` kept as evidence while there
  // are fewer than a dozen.
  void Flag(const std::string& line) {
    ok = false;
    ++violations;
    if (evidence.size() < 12) evidence.push_back(line);
  }
};

struct RecoveryRow {
  std::string what;
  std::vector<double> samples;  // seconds, sorted
  // Samples whose window met a store outage: measured from its end, with
  // the bound + 2 s.
  std::vector<double> disturbed;
  // Samples whose window met a fault of the maintenance leader: each with
  // its own bound (recovery_times.cc).
  std::vector<double> leader_hit;
  double bound = 0;  // seconds
  int over = 0;      // samples past their bound
  int unrecovered = 0;
};

struct CheckResult {
  std::vector<Invariant> invariants;
  std::vector<RecoveryRow> recovery;
  std::map<std::string, int> by_state;
  std::map<std::string, int> dead_by_kind;
  int runs = 0;
  int stale_runs = 0;             // excused stale runs
  int late_starts = 0;            // runs that began after their attempt ended
  int64_t stale_late_max_ms = 0;  // latest excused activity past thaw/death
  int64_t stale_after_end_max_ms =
      0;  // latest excused activity past the attempt's end
  int key_overlaps_excused = 0;
  int limit_stale_overlaps = 0;  // (7) over the limit only with stale runs
  int node_stale_overlaps = 0;   // (8) over a capacity only with stale runs
  bool ok() const;
};

CheckResult Check(const CheckInput& in);

}  // namespace chaos
