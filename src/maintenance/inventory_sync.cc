#include "maintenance/inventory_sync.h"

#include "warden/lists.h"
#include "warden/plural.h"
#include "warden/text.h"

namespace warden {
namespace {

// "exited with status 2: <last line of stderr>" and the like.
std::string Failure(const SubprocessResult& r) {
  std::string why;
  if (!r.started) {
    why = "could not start: " + r.spawn_error;
  } else if (r.timed_out) {
    why = "timed out";
  } else if (r.stopped != StopReason::kNone) {
    why = "stopped (the worker is stopping)";
  } else if (r.signal) {
    why = "killed by signal " + std::to_string(*r.signal);
  } else {
    why = "exited with status " + std::to_string(r.exit_code.value_or(-1));
  }
  std::string err = r.stderr_tail;
  while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
  const size_t nl = err.rfind('\n');
  if (nl != std::string::npos) err = err.substr(nl + 1);
  if (!err.empty()) why += ": " + OneLine(err, 200);
  return why;
}

}  // namespace

Result<NodeSyncReport> RunInventoryCommand(Store& store, Env& env, const InventoryCommand& c,
                                           StopSignal& stop) {
  SubprocessSpec spec;
  spec.command = c.command;
  spec.timeout = c.timeout;
  spec.kill_grace = Millis(1000);
  spec.tail_bytes = kMaxInventoryBytes + 1;
  const SubprocessResult r = env.RunSubprocess(spec, stop, nullptr);
  if (!r.started || r.timed_out || r.stopped != StopReason::kNone || r.signal ||
      r.exit_code.value_or(-1) != 0) {
    return Unavailable("the inventory command " + Failure(r) + "; the registry is unchanged");
  }
  if (r.stdout_tail.size() > kMaxInventoryBytes) {
    return InvalidArgument("the inventory command printed more than " +
                           std::to_string(kMaxInventoryBytes) +
                           " bytes; the registry is unchanged");
  }
  auto inventory = ParseInventory(r.stdout_tail);
  if (!inventory.has_value()) {
    return InvalidArgument("the inventory command printed no inventory (" +
                           inventory.error().message() + "); the registry is unchanged");
  }
  if (inventory->empty()) {
    return InvalidArgument(
        "the inventory command listed no node; a sync would remove every node, so the "
        "registry is unchanged (`warden nodes sync --allow-empty` does it by hand)");
  }
  for (const NodeSpec& n : *inventory) {
    WARDEN_RETURN_IF_ERROR(CheckNodeName(n.name).Annotate("the inventory command"));
    if (n.capacity) {
      WARDEN_RETURN_IF_ERROR(CheckNodeCapacity(*n.capacity).Annotate("the inventory command"));
    }
  }
  const AuditEntry audit{
      0, 0, c.actor, "node.sync",
      Plural(static_cast<int64_t>(inventory->size()), "node") + " (inventory command)", 0};
  return store.NodeSync(*inventory, /*dry_run=*/false, audit);
}

Result<std::vector<Serving>> ClaimingWorkers(Store& store) {
  WARDEN_ASSIGN_OR_RETURN(auto live, store.WorkerList(/*live_only=*/true));
  WARDEN_ASSIGN_OR_RETURN(auto nodes, store.NodeList());
  std::set<std::string> closed;
  for (const NodeInfo& n : nodes) {
    if (!n.TakesWork()) closed.insert(n.name);
  }
  std::vector<Serving> out;
  for (const WorkerInfo& w : live) {
    if (!w.MaintenanceOnly() && w.state == WorkerState::kActive && !closed.count(w.node)) {
      out.push_back(ServingOf(w));
    }
  }
  return out;
}

Result<std::set<std::string>> UnservedWork(Store& store) {
  WARDEN_ASSIGN_OR_RETURN(auto claiming, ClaimingWorkers(store));
  WARDEN_ASSIGN_OR_RETURN(auto backlog, store.JobBacklog({}));
  std::set<std::string> out;
  for (const BacklogGroup& g : Unserved(backlog, claiming)) {
    if (g.state != JobState::kAvailable) continue;
    out.insert("queue " + g.queue + ", " + (g.command ? "command jobs" : "task " + g.task));
  }
  return out;
}

std::string DescribeSync(const NodeSyncReport& r) {
  std::string out;
  auto part = [&](const char* verb, const std::vector<std::string>& names) {
    if (names.empty()) return;
    out += std::string(out.empty() ? "" : "; ") + verb + " " + JoinList(names, ", ");
  };
  part("added", r.added);
  part("back", r.revived);
  part("resized", r.resized);
  part("removed", r.removed);
  out += (out.empty() ? "" : "; ") + Plural(r.unchanged, "node") + " unchanged";
  return out;
}

}  // namespace warden
