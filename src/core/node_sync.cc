#include "core/node_sync.h"

#include <algorithm>
#include <map>

namespace warden {

NodeSyncPlan PlanNodeSync(const std::vector<NodeInfo>& registry,
                          std::span<const NodeSpec> inventory) {
  std::map<std::string, const NodeInfo*> known;
  for (const NodeInfo& n : registry) {
    if (n.registered) known[n.name] = &n;
  }
  NodeSyncPlan plan;
  NodeSyncReport& r = plan.report;
  std::map<std::string, bool> listed;
  for (const NodeSpec& spec : inventory) {
    listed[spec.name] = true;
    auto it = known.find(spec.name);
    if (it == known.end()) {
      r.added.push_back(spec.name);
      plan.upserts.push_back(spec);
      continue;
    }
    const NodeInfo& was = *it->second;
    if (!was.enabled) r.disabled.push_back(spec.name);
    if (!was.present) {
      r.revived.push_back(spec.name);
      plan.upserts.push_back(spec);
    } else if (was.capacity != spec.capacity) {
      r.resized.push_back(spec.name);
      plan.upserts.push_back(spec);
    } else {
      ++r.unchanged;
    }
  }
  for (const auto& [name, node] : known) {
    if (node->present && !listed.count(name)) {
      r.removed.push_back(name);
      plan.removals.push_back(name);
    }
  }
  for (auto* names : {&r.added, &r.revived, &r.removed, &r.resized, &r.disabled}) {
    std::sort(names->begin(), names->end());
  }
  return plan;
}

}  // namespace warden
