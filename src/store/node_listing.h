// Store::NodeList's answer, built alike by every backend, all by name: the
// registry's rows, and the nodes it lacks that have live workers or running
// jobs (`registered` false).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "warden/nodes.h"

namespace warden {

class NodeListing {
 public:
  explicit NodeListing(std::vector<NodeInfo> registry) {
    for (NodeInfo& n : registry) by_name_[n.name] = std::move(n);
  }
  void AddLiveWorkers(const std::string& node, int64_t n) { At(node).live_workers += n; }
  void AddRunning(const std::string& node, int64_t n) { At(node).running += n; }
  std::vector<NodeInfo> Take() {
    std::vector<NodeInfo> out;
    for (auto& [name, n] : by_name_) out.push_back(std::move(n));
    return out;
  }

 private:
  NodeInfo& At(const std::string& name) {
    auto [it, added] = by_name_.try_emplace(name);
    if (added) {
      it->second.name = name;
      it->second.registered = false;
    }
    return it->second;
  }
  std::map<std::string, NodeInfo> by_name_;
};

}  // namespace warden
