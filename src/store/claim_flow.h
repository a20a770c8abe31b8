// A claim's pauses and flow limits (warden/flow.h), applied alike by every
// backend. The backend reads, in the claim's transaction (and on
// PostgreSQL under the lock of each limited queue's row), the paused
// queues, the limits of the claim's queues, and for each limited queue its
// running jobs and its claims in the rate window; ClaimFlow says what the
// claim may take, and Narrow rewrites the claim to it.
//
// A claim of no limited queue gets an empty ClaimFlow, and Narrow changes
// nothing but the paused queues, as before limits existed.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/flow.h"
#include "store/store.h"

namespace warden {

// One limited queue as a claim reads it.
struct FlowRow {
  std::string queue;
  QueueLimits limits;
  int64_t running = 0;        // its running jobs (read when it has a concurrency limit)
  int64_t recent_starts = 0;  // its claims in the window ending now (when rate-limited)
};

struct ClaimFlow {
  std::map<std::string, int64_t> caps;  // limited queues with room: at most this many now
  std::set<std::string> blocked;        // limited queues without room
  std::set<std::string> rated;          // rate-limited queues: their claims are recorded
  // The claiming worker's node (warden/nodes.h): it takes no work (removed
  // or disabled), or it has a capacity and room for this many more jobs.
  bool node_closed = false;
  std::optional<int64_t> node_room;
  bool Limited(const std::string& queue) const {
    return caps.count(queue) > 0 || blocked.count(queue) > 0;
  }
  bool empty() const { return caps.empty() && blocked.empty(); }
};

// The claiming worker's node as the claim read it: its registry row, if
// any (takes work: present and enabled), and when it has a capacity, the
// jobs running on all its workers.
inline void ApplyNode(bool registered, bool takes_work, std::optional<int64_t> capacity,
                      int64_t running, ClaimFlow* flow) {
  if (!registered) return;
  flow->node_closed = !takes_work;
  if (capacity) flow->node_room = std::max<int64_t>(0, *capacity - running);
}

inline ClaimFlow FlowOf(const std::vector<FlowRow>& rows) {
  ClaimFlow f;
  for (const FlowRow& r : rows) {
    if (r.limits.empty()) continue;
    const int64_t allowed = ClaimsAllowed(r.limits, r.running, r.recent_starts);
    if (allowed > 0) {
      f.caps[r.queue] = allowed;
    } else {
      f.blocked.insert(r.queue);
    }
    if (r.limits.rate) f.rated.insert(r.queue);
  }
  return f;
}

// `p` less its paused and blocked queues, in `out`. false: it names queues
// and none is left (a claim of every queue, p.queues empty, keeps its
// empty list: the backend leaves out `paused` and `flow.blocked` itself).
// A claim of one limited queue takes at most its cap, and only for free
// slots: jobs of a limited queue are never claimed ahead.
inline bool Narrow(const ClaimParams& p, const std::set<std::string>& paused,
                   const ClaimFlow& flow, ClaimParams* out) {
  *out = p;
  if (flow.node_closed) return false;
  if (flow.node_room) {
    // A node's capacity counts claimed jobs, so none is claimed ahead: a
    // job waiting in one worker's buffer would hold a place on the node
    // that another of its workers could use now.
    const int for_free_slots = p.limit - std::clamp(p.ahead, 0, p.limit);
    out->limit = static_cast<int>(std::min<int64_t>(for_free_slots, *flow.node_room));
    out->ahead = 0;
    if (out->limit <= 0) return false;
  }
  if (p.queues.empty()) return true;
  std::erase_if(out->queues, [&](const std::string& q) {
    return paused.count(q) > 0 || flow.blocked.count(q) > 0;
  });
  if (out->queues.empty()) return false;
  if (out->queues.size() == 1) {
    auto cap = flow.caps.find(out->queues[0]);
    if (cap != flow.caps.end()) {
      const int64_t for_free_slots = out->limit - std::clamp(out->ahead, 0, out->limit);
      out->limit = static_cast<int>(std::min<int64_t>(for_free_slots, cap->second));
      out->ahead = 0;
      if (out->limit <= 0) return false;
    }
  }
  return true;
}

// The PickLocked walks' rule for one row of queue `queue`, given how many
// of that queue's rows the walk took already and whether the row is for a
// slot not free yet: whether flow control lets it take this row.
inline bool FlowTakes(const ClaimFlow& flow, const std::string& queue, int64_t taken,
                      bool for_later_slot) {
  if (flow.empty()) return true;
  if (flow.blocked.count(queue)) return false;
  auto cap = flow.caps.find(queue);
  if (cap == flow.caps.end()) return true;
  return !for_later_slot && taken < cap->second;
}

}  // namespace warden
