// What a worker can prove about the leases of the jobs it holds, and so
// until when a job's code may start (docs/design.md, "Self-fencing" and
// "The start gate").
//
// A lease is the worker's from the last time the store is known to have
// extended it (its claim, or a heartbeat whose reply listed it) until the
// self-fencing threshold after that, and only while nothing may have
// proven the worker dead meanwhile: a job claimed under an earlier
// registration proves nothing, and while the worker's session does not
// hold its lock (PostgreSQL) the others may prove it dead at any moment.
// After the lock is back, only a claim or heartbeat that began since then
// vouches for a job (a proof of death reached meanwhile is in its reply).
//
// Thread safety: NoteSessionHolds and NewSession from the session loop
// only; the rest from any thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/clock.h"
#include "runtime/running_job.h"
#include "warden/job.h"

namespace warden {

class LeaseGuard {
 public:
  // `heartbeat`: the worker's heartbeat interval (WorkerOptions), which a
  // job with a short lease shortens (core/lease.h).
  LeaseGuard(const Clock& clock, Millis heartbeat) : clock_(clock), heartbeat_(heartbeat) {}

  // When self-fencing stops `r`, the session aside: its lease base plus
  // the threshold for its lease (core/lease.h's SelfFenceAfter).
  int64_t FenceAt(const RunningJob& r) const;
  // Until when `r`'s lease is proven this worker's, now registered as
  // `registered`; 0: not at all.
  int64_t ProvenUntil(const RunningJob& r, WorkerId registered) const;
  // The session lock vouches for `r`: held, and not lost since `r`'s
  // lease base.
  bool SessionVouchesFor(const RunningJob& r) const {
    return !session_lost_ && r.lease_base_mono() > session_back_mono_;
  }

  // What the session loop saw of its lock.
  void NoteSessionHolds(bool holds);
  // A session for a new registration: the old lock proves nothing about it.
  void NewSession() {
    session_held_once_ = false;
    session_lost_ = false;
  }

 private:
  const Clock& clock_;
  const Millis heartbeat_;
  // The lock is lost (held, then the session failed or could not lock
  // again), and when it last came back.
  std::atomic<bool> session_lost_{false};
  std::atomic<int64_t> session_back_mono_{0};
  bool session_held_once_ = false;  // session loop only
};

}  // namespace warden
