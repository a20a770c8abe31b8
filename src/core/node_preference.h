// A job lost or crashed on one node prefers another node for its next
// attempt, when one can take it (docs/nodes.md, "After a loss"): a node
// that just lost a worker or crashed a job may well do it again (out of
// memory, a bad disk, a failing host). A preference, never a wait for
// nothing: the store marks the job only when a claiming worker on another
// node could run it now, and only for kPreferAnotherNodeFor past the time
// the job may run; after that, or for a job no other node serves, the
// node that lost it claims it as before. Every backend asks these two
// functions in the transaction that puts the job back.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "warden/job.h"

namespace warden {

// How long a job kept from the node that lost it stays kept from it, from
// when it may run again. Long enough for a woken worker elsewhere to claim
// it (milliseconds), short enough that a preference that turned out wrong
// (that worker filled its slots meanwhile) costs little.
inline constexpr Millis kPreferAnotherNodeFor{2'000};

// Whether an attempt that ended as `attempt_kind` (found by `lost_by`:
// unset for a worker's own failures) and left its job `next` should send
// it elsewhere:
// a crash or a loss (not a graceful release: a deploy is not the node's
// fault) after which the job waits to run again.
bool LossPrefersAnotherNode(ErrorKind attempt_kind, std::optional<LossCause> lost_by,
                            JobState next);

// A worker that could claim the job elsewhere (active, on a node that takes
// work: maintenance/inventory_sync.h's ClaimingWorkers), with its node's
// room: the running jobs of all workers on a node never exceed its
// capacity, so a free slot on a full node takes nothing.
struct ClaimerElsewhere {
  WorkerInfo worker;
  std::optional<int64_t> node_capacity;  // unset: the node has none
  int64_t node_running = 0;              // jobs running on the node, every worker's
};

// Whether some worker of `claiming` is on a node other than `node`, can run
// the job (queue, task, command), and has a free slot on a node with room.
bool AnotherNodeCanTake(std::span<const ClaimerElsewhere> claiming, const std::string& node,
                        const std::string& queue, const std::string& task, bool command);

// Whether a claim by a worker on `claimer_node` at `now` may take a job
// kept from `avoid_node` until `avoid_until` (both unset: kept from none).
inline bool NodeMayClaim(const std::string& claimer_node, const std::string& avoid_node,
                         std::optional<TimeMs> avoid_until, TimeMs now) {
  return !avoid_until || *avoid_until <= now || avoid_node != claimer_node;
}

}  // namespace warden
