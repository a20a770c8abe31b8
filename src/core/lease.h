// Lease rules a worker applies to itself.
//
// Self-fencing: a worker measures, on its own monotonic clock, the time since
// the *start* of its last successful heartbeat. The store extended its
// leases to (store time of that heartbeat) + lease, which is later than the
// start, so a worker that stops its jobs once that age reaches
// SelfFenceAfter(lease) always stops them before the store can hand them to
// anyone else (clocks need only advance at nearly the same rate).
#pragma once

#include <algorithm>

#include "warden/job.h"

namespace warden {

// A job's lease may be shorter than the worker's (`add --lease`): the worker
// then heartbeats at least three times per shortest lease it holds.
inline Millis HeartbeatFor(Millis lease, Millis heartbeat) {
  return std::max(Millis(1), std::min(heartbeat, lease / 3));
}

// Three quarters of the lease, and never less than 1.5 heartbeats short of it.
inline Millis SelfFenceAfter(Millis lease, Millis heartbeat) {
  const Millis by_fraction = lease * 3 / 4;
  const Millis by_heartbeat = lease - heartbeat * 3 / 2;
  return std::max(Millis(1), std::min(by_fraction, by_heartbeat));
}

inline bool ShouldSelfFence(int64_t mono_now, int64_t last_heartbeat_start_mono,
                            Millis lease, Millis heartbeat) {
  return Millis(mono_now - last_heartbeat_start_mono) >=
         SelfFenceAfter(lease, HeartbeatFor(lease, heartbeat));
}

}  // namespace warden
