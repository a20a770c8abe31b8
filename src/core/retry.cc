#include "core/retry.h"

#include <algorithm>
#include <cmath>

namespace warden {

Millis Backoff(int charged, const BackoffPolicy& policy, double jitter) {
  const int exponent = std::clamp(charged - 1, 0, 40);
  const double raw = static_cast<double>(policy.base.count()) * std::ldexp(1.0, exponent);
  const double capped = std::min(raw, static_cast<double>(policy.cap.count()));
  const double factor = 0.5 + 0.5 * std::clamp(jitter, 0.0, 1.0);
  return Millis(static_cast<int64_t>(capped * factor));
}

namespace {

// Whether an attempt that ended as `in` counts against the crash budget
// (retry.h): the job may have brought its worker down.
bool CountsAsCrash(const FailureInput& in) {
  if (in.kind == ErrorKind::kCrash) return true;
  if (in.kind != ErrorKind::kLost || !in.lost_by) return false;
  return *in.lost_by == LossCause::kProvenDeath || *in.lost_by == LossCause::kOperator;
}

}  // namespace

FailureDecision DecideFailure(const FailureInput& in, double jitter,
                              const BackoffPolicy& backoff) {
  FailureDecision d;
  d.kind = in.kind;

  if (in.kind == ErrorKind::kCancelled) {
    d.next = JobState::kCancelled;
    d.charge = false;
    return d;
  }
  const bool at_most_once = in.delivery == Delivery::kAtMostOnce;
  if (at_most_once && !in.started_mark &&
      (in.kind == ErrorKind::kLost || in.kind == ErrorKind::kReleased)) {
    // The handler never started: requeue as if it had never been claimed.
    d.next = JobState::kAvailable;
    d.charge = false;
    return d;
  }
  if (at_most_once && in.started_mark) {
    d.next = JobState::kDead;
    d.charge = in.kind != ErrorKind::kReleased;
    d.count_crash = CountsAsCrash(in);
    return d;
  }
  if (in.kind == ErrorKind::kReleased) {
    d.next = JobState::kAvailable;
    d.charge = false;
    return d;
  }

  d.count_crash = CountsAsCrash(in);
  if (d.count_crash && in.crashes + 1 >= in.max_crashes) {
    d.next = JobState::kDead;
    d.kind = ErrorKind::kCrashLoop;
    return d;
  }
  const int charged = in.charged + 1;
  const bool exhausted =
      in.retry == RetryPolicy::kNone ||
      (in.retry == RetryPolicy::kDefault && charged >= in.max_attempts);
  if (exhausted) {
    d.next = JobState::kDead;
    return d;
  }
  d.next = JobState::kRetryable;
  const bool first_loss = in.kind == ErrorKind::kLost && in.crashes == 0;
  d.delay = first_loss ? Millis(0) : Backoff(charged, backoff, jitter);
  return d;
}

FailureDecision PredictFailure(const JobInfo& job, ErrorKind kind, bool started_mark) {
  FailureInput in;
  in.kind = kind;
  in.delivery = job.delivery;
  in.started_mark = started_mark;
  in.retry = job.retry;
  in.charged = job.charged;
  in.max_attempts = job.max_attempts;
  in.crashes = job.crashes;
  in.max_crashes = job.max_crashes;
  return DecideFailure(in, 0);
}

}  // namespace warden
