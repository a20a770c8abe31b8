#include "core/silence.h"

#include <algorithm>

namespace warden {

void SilenceJudge::BeginPass(int64_t mono_now) { mono_now_ = mono_now; }

Millis SilenceJudge::Unchanged(Renewable kind, int64_t id, int64_t version, int64_t holder) {
  auto [it, first] = sightings_.try_emplace({kind, id});
  Sighting& s = it->second;
  if (first || s.version != version || s.holder != holder) {
    s = Sighting{version, holder, mono_now_, false};
  }
  s.seen_this_pass = true;
  return Millis(mono_now_ - s.first_seen_mono);
}

void SilenceJudge::EndPass() {
  for (auto it = sightings_.begin(); it != sightings_.end();) {
    if (it->second.seen_this_pass) {
      it->second.seen_this_pass = false;
      ++it;
    } else {
      it = sightings_.erase(it);
    }
  }
}

Millis LeaseUnchanged(SilenceJudge& judge, JobId job, int64_t lease_token, TimeMs expires_at,
                      Millis length, WorkerId worker, std::optional<TimeMs> worker_heartbeat) {
  Millis unchanged = judge.Unchanged(Renewable::kLease, job, expires_at, lease_token);
  if (worker_heartbeat && *worker_heartbeat == expires_at - length.count()) {
    unchanged =
        std::max(unchanged, judge.Unchanged(Renewable::kHeartbeat, worker, *worker_heartbeat));
  }
  return unchanged;
}

}  // namespace warden
