#include "core/lost_claims.h"

namespace warden {

std::vector<JobId> LostClaimDetector::Judge(const HeartbeatStart& at_start,
                                            const std::unordered_map<JobId, int64_t>& held,
                                            int64_t reply_mono) {
  std::unordered_map<JobId, Sighting> unknown;
  std::vector<JobId> lost;
  for (const auto& [id, token] : held) {
    if (at_start.known.count(id)) continue;
    Sighting seen{token, reply_mono};
    auto last = last_.find(id);
    if (last != last_.end() && last->second.lease_token == token) {
      seen.first_reply_mono = last->second.first_reply_mono;
      const auto& sent = at_start.claim_sent_mono;
      if (!sent || *sent > seen.first_reply_mono) {
        lost.push_back(id);
        continue;  // judged: a later sighting starts afresh
      }
    }
    unknown.emplace(id, seen);
  }
  last_ = std::move(unknown);
  return lost;
}

}  // namespace warden
