// Lost claims: jobs the store says a worker holds that the worker will never
// run, because the claim committed but its reply never reached the worker
// (the connection broke after COMMIT). The worker's heartbeats keep such a
// job's lease alive, so nothing else would ever run it: the worker hands it
// back, unrun, once it can prove the reply will never come.
//
// The proof, for a job J that heartbeat replies list as held with token T:
//   - The heartbeat starts at S, before it reads the store. If at S the
//     worker neither runs J nor has J's outcome waiting to be written, the
//     reply of J's claim had not arrived by S: had it, J would be running,
//     waiting, or written before S (and a read after S would not list J
//     with T).
//   - J's claim was sent before the reply of the first heartbeat that
//     listed J (its commit came before that heartbeat's read).
//   - A worker has at most one claim in flight. If, at S, none is, or the
//     one in flight was sent after that first reply, J's claim had already
//     ended without delivering J.
// A single sighting proves nothing (J's claim may be in flight, or J may
// have run and finished between the read and the reply's processing), so J
// must be listed by two consecutive heartbeats.
// One other case looks the same: an outcome the completer gave up on while
// the worker stops. Handing that job back does what the goodbye would.
//
// Pure: the worker reports what it saw; the detector keeps the sightings.
#pragma once

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "warden/job.h"

namespace warden {

// What the worker knew at a heartbeat's start, before it read the store.
struct HeartbeatStart {
  std::unordered_set<JobId> known;         // running, or outcome not yet written
  std::optional<int64_t> claim_sent_mono;  // when the claim in flight was sent
};

class LostClaimDetector {
 public:
  // `held`: the reply's jobs (id → lease token); `reply_mono`: when it came.
  // Returns the jobs proven lost.
  std::vector<JobId> Judge(const HeartbeatStart& at_start,
                           const std::unordered_map<JobId, int64_t>& held, int64_t reply_mono);

 private:
  struct Sighting {
    int64_t lease_token;
    int64_t first_reply_mono;
  };
  std::unordered_map<JobId, Sighting> last_;  // unknown jobs the last reply listed
};

}  // namespace warden
