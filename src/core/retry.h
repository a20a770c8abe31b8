// What a failed attempt means for its job: the one place that decides.
//
// Rules (docs/design.md, "Job model"):
// - `released` (graceful shutdown) is not charged and gets no backoff.
// - at-most-once: an attempt that ends before its durable `started` mark is
//   requeued uncharged (the handler never ran); once started, any end other
//   than success leaves the job `dead` with that kind.
// - the crash budget (max_crashes) is for crashes the job may have caused:
//   a `crash` (its process died by a signal), and a `lost` whose worker is
//   gone (proven dead: its process, its host's boot or its PostgreSQL
//   session; or declared dead by an operator), since a job can take its
//   worker down. Reaching it quarantines the job as `dead` / `crash_loop`.
//   A `lost` whose worker may well live costs an attempt, never a crash:
//   its lease ran out unrenewed (the worker frozen, cut off, or starved by
//   a slow store), or the worker stopped the job itself because it could
//   no longer prove its lease (self-fencing). A store that answers slowly
//   must not quarantine healthy jobs; max_attempts still bounds a job that
//   keeps silencing its workers.
// - retry policy none: one charged attempt; default: max_attempts;
//   forever: no limit.
// - `cancelled` ends the job as `cancelled`.
// Backoff: a `lost` job none of whose attempts counted as a crash is
// retried at once (its worker died or went silent, most likely not its
// fault, and rescue must be fast; a lease had to run out, or a worker to
// self-fence, before each such loss, which paces them); otherwise
// min(cap, base * 2^(charged-1)), scaled by a jitter factor in [0.5, 1].
#pragma once

#include <optional>

#include "warden/job.h"

namespace warden {

struct BackoffPolicy {
  Millis base{1000};
  Millis cap{10 * 60 * 1000};
};

struct FailureInput {
  ErrorKind kind = ErrorKind::kError;
  Delivery delivery = Delivery::kAtLeastOnce;
  bool started_mark = false;  // at-most-once: `started` was recorded
  RetryPolicy retry = RetryPolicy::kDefault;
  int charged = 0;  // charged attempts before this one
  int max_attempts = 1;
  int crashes = 0;  // attempts before this one that counted as crashes
  int max_crashes = 3;
  // A `lost` attempt found by someone other than its worker: how. Unset:
  // its own worker reported it (it self-fenced, or its claim's reply never
  // came).
  std::optional<LossCause> lost_by;
};

struct FailureDecision {
  JobState next = JobState::kRetryable;  // retryable, available, dead, cancelled
  ErrorKind kind = ErrorKind::kError;    // as recorded on the job
  bool charge = true;                    // counts against max_attempts
  bool count_crash = false;              // counts against max_crashes
  Millis delay{0};                       // until run_at (retryable only)
};

// `jitter` in [0, 1): the caller's randomness, so this stays pure.
FailureDecision DecideFailure(const FailureInput& in, double jitter,
                              const BackoffPolicy& backoff = {});

Millis Backoff(int charged, const BackoffPolicy& policy, double jitter);

// What the store will decide (its state and kind; not its jitter) for a
// failed attempt of `job` as claimed: nothing DecideFailure reads changes
// while the job's worker holds it, save an operator's cancel. For the
// worker's own metrics, which must not wait for the store to say.
FailureDecision PredictFailure(const JobInfo& job, ErrorKind kind, bool started_mark);

}  // namespace warden
