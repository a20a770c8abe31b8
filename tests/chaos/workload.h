// The workload: every job the runner enqueues, generated from the seed.
//
// A mix of command jobs (task `chaos-cmd`, run by `warden worker` as
// `exec warden_chaos_job LEDGER`) and in-process jobs (task `chaos-inproc`,
// run by warden_chaos_worker), of both delivery modes, with shared
// concurrency keys, checkpoints, planned failures (retries), attempts that
// run past their timeout, delays, priorities, every retry policy and varied
// durations (mostly short, a few long enough to be caught by faults).
// A share of the jobs, chosen by the seed apart from everything else about
// them, goes to a second queue with a concurrency limit (invariant 7).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "job_plan.h"
#include "warden/job.h"

namespace chaos {

struct PlannedJob {
  JobPlan plan;
  warden::JobSpec spec;
  bool command = false;
  // When the feeder enqueues it, ms after the fault window opens.
  int64_t enqueue_at_ms = 0;
};

struct WorkloadParams {
  uint64_t seed = 0;
  int jobs = 0;
  int64_t window_ms = 0;  // jobs are fed over the first 70% of it
  std::string queue;
  // With a name: kLimitedShare of the jobs go to this queue instead.
  std::string limited_queue;
  std::string job_bin, ledger;  // for the command jobs' command line
};

// The share of the jobs in the limited queue: enough that it has a backlog
// (its limit is reached, not only respected) through the fault window,
// few enough that it drains with the rest.
inline constexpr double kLimitedShare = 0.10;

std::vector<PlannedJob> MakeWorkload(const WorkloadParams& p);

}  // namespace chaos
