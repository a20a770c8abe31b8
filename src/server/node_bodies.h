// The request bodies of the node routes (server/api_nodes.h), read
// strictly: an unknown member or a wrong type is kInvalidArgument naming
// it, never ignored. A sync's "nodes" is read by the inventory's own parser
// (ParseInventory, warden/nodes.h). Pure: no I/O (fuzz target `inventory`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "warden/nodes.h"

namespace warden::server {

// PUT /v1/nodes/{name}: {"capacity": N or null}; "" or {}: the capacity
// stays (set_capacity false).
struct NodePutBody {
  bool set_capacity = false;
  std::optional<int64_t> capacity;
};
Result<NodePutBody> NodePutBodyIn(const std::string& text);
// POST /v1/nodes/sync: {"nodes": [...], "dry_run", "force", "allow_empty"}
// (booleans, false when left out). No node without allow_empty: refused,
// as `warden nodes sync` refuses it.
struct NodeSyncBody {
  std::vector<NodeSpec> nodes;
  bool dry_run = false;
  bool force = false;
  bool allow_empty = false;
};
Result<NodeSyncBody> NodeSyncBodyIn(const std::string& text);

}  // namespace warden::server
