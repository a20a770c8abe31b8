// `warden nodes sync`: what an inventory changes in the registry, the same
// for every backend (warden/nodes.h). Pure.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "warden/nodes.h"

namespace warden {

struct NodeSyncPlan {
  NodeSyncReport report;
  std::vector<NodeSpec> upserts;      // added, revived and resized: present, this capacity
  std::vector<std::string> removals;  // present, not in the inventory
};

// `registry`: the registered nodes (NodeInfo::registered), any order.
NodeSyncPlan PlanNodeSync(const std::vector<NodeInfo>& registry,
                          std::span<const NodeSpec> inventory);

}  // namespace warden
