#include "core/node_preference.h"

#include <algorithm>

#include "warden/backlog.h"

namespace warden {

bool LossPrefersAnotherNode(ErrorKind attempt_kind, std::optional<LossCause> lost_by,
                            JobState next) {
  if (next != JobState::kAvailable && next != JobState::kRetryable) return false;
  if (attempt_kind == ErrorKind::kCrash) return true;
  return lost_by.has_value() && *lost_by != LossCause::kRelease;
}

bool AnotherNodeCanTake(std::span<const ClaimerElsewhere> claiming, const std::string& node,
                        const std::string& queue, const std::string& task, bool command) {
  return std::any_of(claiming.begin(), claiming.end(), [&](const ClaimerElsewhere& c) {
    const WorkerInfo& w = c.worker;
    return w.node != node && w.state == WorkerState::kActive && w.running < w.concurrency &&
           (!c.node_capacity || c.node_running < *c.node_capacity) &&
           CanRun(ServingOf(w), queue, task, command);
  });
}

}  // namespace warden
