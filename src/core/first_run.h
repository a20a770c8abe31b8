// When a new job may first run, the one rule every store applies at insert
// (a store that computes it in SQL, as PostgreSQL does with its own clock,
// follows the same rule there): JobSpec::run_at when given, a time already
// past meaning now; else now + JobSpec::delay. A job that may not run yet
// starts `scheduled`, else `available`.
#pragma once

#include <algorithm>

#include "warden/job.h"

namespace warden {

inline TimeMs FirstRunAt(const JobSpec& spec, TimeMs now) {
  return spec.run_at ? std::max(now, *spec.run_at) : now + spec.delay.count();
}

inline JobState FirstState(const JobSpec& spec, TimeMs now) {
  return FirstRunAt(spec, now) > now ? JobState::kScheduled : JobState::kAvailable;
}

}  // namespace warden
