// An inventory as `warden nodes sync --from` reads it (ParseInventory,
// include/warden/nodes.h), and the sync it plans (core/node_sync.h).
// Checks: a refusal is one InvalidArgument line; an accepted inventory has
// valid, distinct names and capacities in range, and reads back the same
// from its own lines and its own JSON. Planned against a registry made of
// the same nodes, some removed or disabled and some extra ones, the sync
// leaves present exactly the inventory's nodes with its capacities, keeps
// every enabled flag, and reports each node once. The same text as the
// body of POST /v1/nodes/sync and PUT /v1/nodes/{name}
// (server/node_bodies.h): a refusal is one InvalidArgument line, an
// accepted body holds only valid nodes and capacities, and an accepted
// inventory as a sync body's "nodes" reads back the same.
#include <map>
#include <set>

#include "core/node_sync.h"
#include "fuzz_check.h"
#include "server/node_bodies.h"
#include "warden/nodes.h"

namespace warden::fuzz {
namespace {

std::string AsLines(const std::vector<NodeSpec>& nodes) {
  std::string text;
  for (const NodeSpec& n : nodes) {
    text += n.name + " " + (n.capacity ? std::to_string(*n.capacity) : "-") + "\n";
  }
  return text;
}

std::string AsJson(const std::vector<NodeSpec>& nodes) {
  Json list = Json::array();
  for (const NodeSpec& n : nodes) {
    list.push_back({{"name", n.name}, {"capacity", n.capacity ? Json(*n.capacity) : Json()}});
  }
  return list.dump();
}

void CheckPlan(const std::vector<NodeSpec>& inventory, size_t seed) {
  // A registry: every other inventory node registered (some removed, some
  // disabled), and two that the inventory lacks.
  std::vector<NodeInfo> registry;
  for (size_t i = 0; i < inventory.size(); i += 2) {
    NodeInfo n;
    n.name = inventory[i].name;
    n.present = (seed + i) % 3 != 0;
    n.enabled = (seed + i) % 5 != 0;
    n.capacity = (seed + i) % 2 ? inventory[i].capacity : std::optional<int64_t>(7);
    registry.push_back(n);
  }
  std::set<std::string> in_inventory;
  for (const NodeSpec& s : inventory) in_inventory.insert(s.name);
  for (const char* extra : {"zz-extra-1", "zz-extra-2"}) {
    if (in_inventory.count(extra)) continue;  // a registry names a node once
    NodeInfo n;
    n.name = extra;
    n.present = seed % 2 == 0;
    registry.push_back(n);
  }
  const NodeSyncPlan plan = PlanNodeSync(registry, inventory);
  std::map<std::string, NodeInfo> after;
  for (const NodeInfo& n : registry) after[n.name] = n;
  for (const NodeSpec& s : plan.upserts) {
    NodeInfo& n = after[s.name];
    if (n.name.empty()) n.enabled = true;
    n.name = s.name;
    n.present = true;
    n.capacity = s.capacity;
  }
  for (const std::string& name : plan.removals) {
    FUZZ_CHECK(after.count(name) && after[name].present, name);
    after[name].present = false;
  }
  std::set<std::string> listed;
  for (const NodeSpec& s : inventory) {
    listed.insert(s.name);
    FUZZ_CHECK(after[s.name].present && after[s.name].capacity == s.capacity, s.name);
  }
  for (const auto& [name, n] : after) {
    FUZZ_CHECK(n.present == (listed.count(name) > 0), name);
  }
  for (const NodeInfo& n : registry) FUZZ_CHECK(after[n.name].enabled == n.enabled, n.name);
  const NodeSyncReport& r = plan.report;
  std::set<std::string> reported;
  for (const auto* names : {&r.added, &r.revived, &r.removed, &r.resized}) {
    for (const std::string& n : *names) FUZZ_CHECK(reported.insert(n).second, n);
  }
  FUZZ_CHECK(reported.size() + static_cast<size_t>(r.unchanged) ==
                 inventory.size() + r.removed.size(),
             "every node reported once");
}

void CheckBodies(const std::string& text) {
  const auto sync = server::NodeSyncBodyIn(text);
  if (!sync.has_value()) {
    CheckRefusal(sync.error(), 400);
  } else {
    FUZZ_CHECK(!sync->nodes.empty() || sync->allow_empty, "an empty sync without allow_empty");
    for (const NodeSpec& n : sync->nodes) {
      FUZZ_CHECK(CheckNodeName(n.name).ok(), n.name);
      FUZZ_CHECK(!n.capacity || CheckNodeCapacity(*n.capacity).ok(), n.name);
    }
  }
  const auto put = server::NodePutBodyIn(text);
  if (!put.has_value()) {
    CheckRefusal(put.error(), 400);
  } else {
    FUZZ_CHECK(!put->capacity || CheckNodeCapacity(*put->capacity).ok(), text);
    FUZZ_CHECK(put->set_capacity || !put->capacity, text);
  }
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);
  CheckBodies(text);
  const auto parsed = ParseInventory(text);
  if (!parsed.has_value()) {
    CheckRefusal(parsed.error(), 300);
    return 0;
  }
  std::set<std::string> names;
  for (const NodeSpec& n : *parsed) {
    FUZZ_CHECK(CheckNodeName(n.name).ok(), n.name);
    FUZZ_CHECK(!n.capacity || CheckNodeCapacity(*n.capacity).ok(), n.name);
    FUZZ_CHECK(names.insert(n.name).second, "a name twice: " + n.name);
  }
  for (const std::string& again : {AsLines(*parsed), AsJson(*parsed)}) {
    auto back = ParseInventory(again);
    FUZZ_CHECK(back.has_value(), again + " -> " + back.error().ToString());
    FUZZ_CHECK(*back == *parsed, again);
  }
  const std::string body = "{\"nodes\": " + AsJson(*parsed) + ", \"allow_empty\": true}";
  auto sync = server::NodeSyncBodyIn(body);
  FUZZ_CHECK(sync.has_value(), body + " -> " + sync.error().ToString());
  FUZZ_CHECK(sync->nodes == *parsed, body);
  CheckPlan(*parsed, size);
  return 0;
}
