// Claiming ahead: how many jobs a worker claims beyond its free slots.
//
// A claim is a round trip ending in a durable commit (about a millisecond
// on PostgreSQL). Claiming only for free slots, a worker whose jobs are
// much shorter than that finishes them and then waits, every slot idle, for
// the next claim: at the default 8 slots, no-op jobs ran 8 per round trip.
// So it also claims the jobs its slots are expected to finish while the
// next claim is on its way, slots × claim time / job time, and a job
// claimed ahead waits for a slot about one claim's time.
//
// A job claimed ahead is held like a running one (heartbeats keep its lease,
// a shutdown hands it back unrun, a dead worker's is recovered) and starts
// only when a slot takes it, and then only if the worker can still prove
// its lease its own (Worker::Impl::LeaseProvenUntil): at-most-once marks
// and timeouts count from there. When a worker dies, every job it held is recovered as `lost`, and
// the store cannot tell one that waited from one that ran, so each is
// charged an attempt and a crash: only jobs that such a charge cannot kill
// are claimed ahead (SafeToClaimAhead).
//
// Nothing is claimed ahead of jobs longer than slots × claim time
// (seconds-long jobs never), and the cap bounds what a wrong estimate
// costs: a long job after many short ones holds up at most that many jobs
// claimed ahead of it, for at most its own duration.
#pragma once

#include <algorithm>
#include <cmath>

#include "warden/job.h"

namespace warden {

// Most jobs claimed ahead: per slot, and in all (a worker of many slots
// already claims in large batches).
inline constexpr int kClaimAheadPerSlot = 4;
inline constexpr int kClaimAheadMax = 32;

// `claim_us`, `job_us`: recent averages of a claim's round trip and of a
// job's time in its slot; 0 when not yet known (nothing is claimed ahead).
inline int ClaimAhead(int slots, double claim_us, double job_us) {
  if (slots <= 0 || claim_us <= 0 || job_us <= 0) return 0;
  const double cap = std::min(slots * kClaimAheadPerSlot, kClaimAheadMax);
  return static_cast<int>(std::min(cap, std::floor(slots * claim_us / job_us)));
}

// Whether a job may be claimed ahead: one more loss leaves it alive and
// retried at once (core/retry.h). An at-most-once job that never started is
// requeued uncharged; an at-least-once job needs retries and a crash to
// spare, and no charged attempt yet: a job that failed or was lost once
// already is claimed only into a free slot. It may be the one that kills
// workers, and a rescued job should run at once, not wait behind another
// job's long run. (Charged, not crashes: a lost lease costs no crash.)
// The PostgreSQL claim repeats this in SQL (pg_store_claim.cc, kSafeToClaimAhead).
inline bool SafeToClaimAhead(const JobInfo& job) {
  if (job.delivery == Delivery::kAtMostOnce) return true;
  return job.charged == 0 && job.crashes == 0 && job.max_crashes > 1 &&
         job.retry != RetryPolicy::kNone &&
         (job.retry == RetryPolicy::kForever || job.max_attempts > 1);
}

// A recent average: each new sample weighs 1/8.
inline double Smooth(double average, double sample) {
  return average <= 0 ? sample : average + (sample - average) / 8;
}

}  // namespace warden
