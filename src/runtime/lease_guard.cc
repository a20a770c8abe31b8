#include "runtime/lease_guard.h"

#include "core/lease.h"

namespace warden {

int64_t LeaseGuard::FenceAt(const RunningJob& r) const {
  return r.lease_base_mono() + SelfFenceAfter(r.lease, HeartbeatFor(r.lease, heartbeat_)).count();
}

int64_t LeaseGuard::ProvenUntil(const RunningJob& r, WorkerId registered) const {
  // Claimed under a registration the store has since declared dead.
  if (r.worker != registered) return 0;
  if (!SessionVouchesFor(r)) return 0;
  return FenceAt(r);
}

void LeaseGuard::NoteSessionHolds(bool holds) {
  if (!holds) {
    // Only a lock once held can be missed by the others: before the first
    // one (and for a new registration) nothing proves this worker dead.
    if (session_held_once_) session_lost_ = true;
    return;
  }
  session_held_once_ = true;
  if (session_lost_) {
    session_back_mono_ = clock_.MonotonicMs();
    session_lost_ = false;
  }
}

}  // namespace warden
