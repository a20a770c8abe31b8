// What an operator may do to a job in a given state (`warden jobs retry`,
// `warden jobs cancel`), judged alike by every backend: a store reads the
// state under its lock, asks here, and writes the change only if allowed.
#pragma once

#include "warden/job.h"
#include "warden/status.h"

namespace warden {

// Retry: dead, cancelled, expired or still-waiting jobs; never a running
// job (its worker holds it) or a succeeded one (it must not run twice),
// nor a scheduled one: running that before its time is "run now", said
// as such (`warden jobs run-now`), not a retry.
Status CheckRetryAllowed(JobId id, JobState state);
// Run now: a scheduled job, or a retryable one waiting out its backoff,
// becomes due at once, its attempts and budgets as they were.
Status CheckRunNowAllowed(JobId id, JobState state);
// Cancel: anything not yet finished.
Status CheckCancelAllowed(JobId id, JobState state);

}  // namespace warden
