#include "core/operator_rules.h"

#include <string>

namespace warden {

Status CheckRetryAllowed(JobId id, JobState state) {
  if (state == JobState::kRunning || state == JobState::kSucceeded) {
    return FailedPrecondition("job " + std::to_string(id) + " is " + JobStateName(state) +
                              "; only dead, cancelled, expired or waiting jobs can be retried");
  }
  if (state == JobState::kScheduled) {
    const std::string n = std::to_string(id);
    return FailedPrecondition("job " + n +
                              " is scheduled, not failed: retry is for dead, cancelled or "
                              "expired jobs; to run it before its time: warden jobs run-now " +
                              n + " (POST /v1/jobs/" + n + "/run-now)");
  }
  return Status::Ok();
}

Status CheckRunNowAllowed(JobId id, JobState state) {
  if (state == JobState::kScheduled || state == JobState::kRetryable) return Status::Ok();
  const std::string n = std::to_string(id);
  std::string why = "only a scheduled job, or a retryable one waiting to retry, can be run now";
  if (state == JobState::kDead || state == JobState::kCancelled || state == JobState::kExpired) {
    why += "; to run a " + std::string(JobStateName(state)) + " job again: warden jobs retry " + n;
  } else if (state == JobState::kAvailable) {
    why = "it is due already and waits for a worker (warden jobs why " + n + ")";
  }
  return FailedPrecondition("job " + n + " is " + JobStateName(state) + ": " + why);
}

Status CheckCancelAllowed(JobId id, JobState state) {
  if (IsTerminal(state)) {
    return FailedPrecondition("job " + std::to_string(id) + " is already " +
                              JobStateName(state));
  }
  return Status::Ok();
}

}  // namespace warden
