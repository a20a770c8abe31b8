// How recovered jobs are counted (core/metrics.h), alike wherever a
// recovery happens: a worker's sweeps, an operator's release, `warden
// sweep`.
#pragma once

#include <vector>

#include "core/metrics.h"
#include "warden/client.h"

namespace warden {

// The `outcome` label of an attempt that left its job in `next`.
const char* OutcomeOf(JobState next);

// For each: warden_jobs_rescued_total{cause}, warden_recovery_seconds{cause},
// the lost attempt in warden_jobs_completed_total{queue,outcome}, and a
// quarantine in warden_crash_loop_quarantines_total{queue}.
void CountRecoveries(Metrics& metrics, const std::vector<Recovery>& recoveries);

// The recoveries of one rescue, all with `cause` and `took`.
std::vector<Recovery> RecoveriesOf(const struct RescueReport& report, const char* cause,
                                   Millis took);

}  // namespace warden
