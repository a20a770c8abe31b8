// Why isn't this job running? The reasons, each with its evidence, from
// what the store says about the job, its queue, its concurrency key and
// the live workers: `warden jobs why ID`, GET /v1/jobs/{id}/why, the
// dashboard. Pure: the caller reads the facts (Client::WhyNotRunning).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "warden/job.h"
#include "warden/nodes.h"
#include "warden/operator.h"

namespace warden {

struct WhyFacts {
  JobInfo job;
  TimeMs now = 0;  // the store's clock
  std::optional<TimeMs> queue_paused_at;
  // The queue's flow limits and what holds them (none: not limited).
  std::optional<QueueFlow> queue_flow;
  // A running job that holds the job's concurrency key (none: free).
  std::optional<JobId> key_holder;
  // Active and draining, with running counts, silent_for and node_disabled
  // filled (Client::ListWorkers).
  std::vector<WorkerInfo> live_workers;
  std::vector<NodeInfo> nodes;  // the registry: capacities, running, enabled
};

struct WhyReason {
  // Stable codes: running, worker_silent, finished, scheduled, backing_off,
  // queue_paused, queue_concurrency_limit, queue_rate_limit,
  // concurrency_key_held, start_deadline_passed, avoids_node,
  // no_worker_serves, only_draining_workers, only_silent_workers,
  // node_disabled, node_capacity_full, slots_busy, claimable.
  std::string code;
  std::string message;  // for a person, one line
  Json evidence;        // the facts behind it (times, ids, names, counts)
};

// Every reason that holds, most decisive first; never empty (a job that
// nothing holds back is `claimable`).
std::vector<WhyReason> WhyNotRunning(const WhyFacts& facts);

}  // namespace warden
