// The promises of docs/design.md ("What must stay true") that can be judged
// after a run from what the store says (every job, attempts filled) and
// what really ran (a ledger the jobs kept outside the job table). One
// definition for every harness that checks them: `warden demo`, the chaos
// runner and the runtime simulation; and anyone who keeps a ledger of
// their own. What depends on a harness's faults (recovery bounds, a stale
// run's excuse) stays with the harness. Pure: no I/O.
//
//   1  none lost, none stuck: every acknowledged job is in the store and,
//      once the run drained, terminal.
//   2  at most one committed completion per job: a succeeded job has
//      exactly one succeeded attempt, any other none; and, where the ledger
//      sees ends, it is a run the ledger saw finish with that lease token.
//   3  no at-most-once job's code started twice (ledger runs), nor marked
//      started twice by the store, but after an operator's retry.
//   4  at most one running attempt per concurrency key: the store's
//      attempts of one key never overlap (claimed .. finished), where the
//      store's clock did not step.
//   5  every ledger run is an attempt of the store (job, attempt, token and,
//      where the ledger knows it, worker).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "warden/job.h"

namespace warden {

// One start of a job's code, as the ledger saw it.
struct LedgerRun {
  JobId job = 0;
  int attempt = 0;
  int64_t token = 0;
  WorkerId worker = 0;    // 0: the ledger does not know
  bool finished = false;  // its code ran to its end and succeeded
};

struct InvariantInput {
  std::vector<JobInfo> jobs;        // the run's, attempts filled
  std::vector<JobId> acknowledged;  // empty: every job in `jobs`
  std::vector<LedgerRun> runs;
  bool drained = true;              // false: (1) checks only that none is lost
  bool ledger_sees_ends = true;     // (2) checks `finished`
  bool store_clock_steady = true;   // false: (4) is left to a snapshot check
  std::set<JobId> retried_by_operator;
};

struct InvariantResult {
  std::string name;
  int violations = 0;
  std::vector<std::string> evidence;  // the first few
  bool ok() const { return violations == 0; }
};

std::vector<InvariantResult> CheckInvariants(const InvariantInput& in);

// (4) at one moment: the running jobs that share a concurrency key with
// another running job, one line each. Any store, any clock.
std::vector<std::string> RunningKeyConflicts(const std::vector<JobInfo>& jobs);

// Each violation's evidence, "name: line" per line; empty: all held.
std::string DescribeViolations(const std::vector<InvariantResult>& results);

}  // namespace warden
