#include "core/operator_rules.h"

#include <string>

namespace warden {

Status CheckRetryAllowed(JobId id, JobState state) {
  if (state == JobState::kRunning || state == JobState::kSucceeded) {
    return FailedPrecondition("job " + std::to_string(id) + " is " + JobStateName(state) +
                              "; only dead, cancelled, expired or waiting jobs can be retried");
  }
  return Status::Ok();
}

Status CheckCancelAllowed(JobId id, JobState state) {
  if (IsTerminal(state)) {
    return FailedPrecondition("job " + std::to_string(id) + " is already " +
                              JobStateName(state));
  }
  return Status::Ok();
}

}  // namespace warden
