// Client: the node registry (warden/nodes.h).
#include <set>
#include <string>
#include <vector>

#include "store/store.h"
#include "warden/client.h"
#include "warden/plural.h"
#include "warden/text.h"

namespace warden {
namespace {

AuditEntry NodeAudit(const std::string& actor, const std::string& action,
                     const std::string& target) {
  return AuditEntry{0, 0, actor, action, target, 0};
}

}  // namespace

Result<std::vector<NodeInfo>> Client::ListNodes() { return store_->NodeList(); }

Result<bool> Client::AddNode(const NodeSpec& node, bool set_capacity) {
  WARDEN_RETURN_IF_ERROR(CheckNodeName(node.name));
  if (set_capacity && node.capacity) WARDEN_RETURN_IF_ERROR(CheckNodeCapacity(*node.capacity));
  std::string target = node.name;
  if (set_capacity) target += " (" + DescribeCapacity(node.capacity) + ")";
  return store_->NodePut(node, set_capacity, NodeAudit(actor_, "node.add", target));
}

Result<bool> Client::SetNodeEnabled(const std::string& name, bool enabled) {
  WARDEN_RETURN_IF_ERROR(CheckNodeName(name));
  WARDEN_ASSIGN_OR_RETURN(std::vector<NodeInfo> nodes, store_->NodeList());
  bool known = false;
  for (const NodeInfo& n : nodes) known |= n.name == name;
  if (!known) {
    return NotFound("no node '" + OneLine(name, 60) +
                    "': not registered, and no live worker runs there (warden nodes ls)");
  }
  return store_->NodeSetEnabled(name, enabled,
                                NodeAudit(actor_, enabled ? "node.enable" : "node.disable", name));
}

// Releases the live workers on `nodes` (the operator's word that those
// machines are gone), adding to the counts.
Status Client::ReleaseNodesWorkers(const std::vector<std::string>& nodes, int* workers,
                                   int64_t* jobs) {
  const std::set<std::string> gone(nodes.begin(), nodes.end());
  WARDEN_ASSIGN_OR_RETURN(std::vector<WorkerInfo> live, store_->WorkerList(/*live_only=*/true));
  for (const WorkerInfo& w : live) {
    if (!gone.count(w.node)) continue;
    Result<int> rescued = ReleaseWorker(std::to_string(w.id), /*force=*/true);
    if (!rescued.has_value()) {
      // Stopped or declared dead meanwhile: nothing left to release.
      if (rescued.error().code() == StatusCode::kNotFound) continue;
      return rescued.error();
    }
    ++*workers;
    *jobs += *rescued;
  }
  return Status::Ok();
}

Result<Client::NodeRemoval> Client::RemoveNode(const std::string& name, bool force) {
  WARDEN_RETURN_IF_ERROR(CheckNodeName(name));
  NodeRemoval out;
  WARDEN_ASSIGN_OR_RETURN(
      out.changed,
      store_->NodeRemove(name, NodeAudit(actor_, force ? "node.remove.force" : "node.remove",
                                         name)));
  if (force) {
    WARDEN_RETURN_IF_ERROR(ReleaseNodesWorkers({name}, &out.workers_released,
                                               &out.jobs_recovered));
  }
  return out;
}

Result<Client::NodeSync> Client::SyncNodes(const std::vector<NodeSpec>& inventory, bool dry_run,
                                           bool force, bool allow_empty) {
  for (const NodeSpec& n : inventory) {
    WARDEN_RETURN_IF_ERROR(CheckNodeName(n.name));
    if (n.capacity) WARDEN_RETURN_IF_ERROR(CheckNodeCapacity(*n.capacity));
  }
  if (inventory.empty() && !allow_empty) {
    return InvalidArgument(
        "the inventory lists no node: a sync would remove every node (an inventory command "
        "that failed looks the same); pass --allow-empty if that is meant");
  }
  NodeSync out;
  WARDEN_ASSIGN_OR_RETURN(
      out.report,
      store_->NodeSync(inventory, dry_run,
                       NodeAudit(actor_, force ? "node.sync.force" : "node.sync",
                                 Plural(static_cast<int64_t>(inventory.size()), "node"))));
  if (force && !dry_run) {
    WARDEN_RETURN_IF_ERROR(ReleaseNodesWorkers(out.report.removed, &out.workers_released,
                                               &out.jobs_recovered));
  }
  return out;
}

}  // namespace warden
