// Judging silence across wall-clock steps (docs/design.md, "Time").
//
// A lease or a heartbeat is a reading of the store's wall clock, and the
// wall clock steps (NTP, a VM resumed). Comparing a renewal's time with a
// later reading, as "lease_expires_at < now" does, cannot tell a step from
// elapsed time: a step forward makes every live worker look silent (its jobs
// would be taken from it), a step back hides a real silence for as long as
// the step.
//
// So silence is judged by watching, never by comparing wall-clock readings:
// a row is silent once the judge has seen it unchanged (not renewed, same
// holder) for its whole length, measured on the judge's own monotonic
// clock. The store's values serve only as versions: any renewal changes
// them, whatever the clock did. The cost: a verdict comes up to one pass
// after the renewal it judges was written (the judge sees it first at its
// next pass), never early; a live worker's self-fencing, measured on its
// monotonic clock from before its renewal, always comes first.
//
// Pure: the caller reads the rows and its monotonic clock; the judge keeps
// the sightings. One judge per judging thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "warden/job.h"

namespace warden {

// What is renewed: a job's lease, a worker's heartbeat, a leader's lease.
enum class Renewable { kLease, kHeartbeat, kLeader };

class SilenceJudge {
 public:
  // Each pass, and again after each read of rows: a row first seen in a
  // read was there when the read reached the store, not before, so it is
  // stamped when the reply is in (a slow read would otherwise backdate a
  // renewal it returns, and a verdict could come early).
  void BeginPass(int64_t mono_now);

  // How long the row `(kind, id)` has been seen as it is now: 0 at its first
  // sighting and whenever `version` (the value a renewal writes) or `holder`
  // (a lease token, a leader) changed since the pass before. Asking twice in
  // one pass is harmless.
  Millis Unchanged(Renewable kind, int64_t id, int64_t version, int64_t holder = 0);

  // After each pass: a row not asked about in this pass is gone (finished,
  // taken over, no longer live), and so is its sighting. A row that comes
  // back starts afresh.
  void EndPass();

 private:
  struct Sighting {
    int64_t version = 0, holder = 0;
    int64_t first_seen_mono = 0;
    bool seen_this_pass = false;
  };
  int64_t mono_now_ = 0;
  std::map<std::pair<Renewable, int64_t>, Sighting> sightings_;
};

// How long a job's lease has been silent: seen unchanged (same expiry,
// same token) for that long. A heartbeat renews all of its worker's leases
// in one statement (the lease's expiry minus its length is then the
// heartbeat's time, to the millisecond): such a lease has been silent at
// least as long as that heartbeat, which every worker watches, so a worker
// that has just become the leader need not watch the lease itself for a
// whole length first. `worker_heartbeat`: its worker row's, when there is
// one.
Millis LeaseUnchanged(SilenceJudge& judge, JobId job, int64_t lease_token, TimeMs expires_at,
                      Millis length, WorkerId worker, std::optional<TimeMs> worker_heartbeat);

}  // namespace warden
