// Nodes: the registry of the machines workers run on (docs/nodes.md).
//
// A node is named as its workers are registered under it (the host name,
// or `warden worker --node NAME`). A registered node is:
// - present or removed: `warden nodes sync` makes the registry's present
//   nodes exactly its inventory's, and `nodes remove` takes one out. A
//   removed node's row stays (a tombstone), so that a worker there is known
//   to be on a removed node, not on a new one;
// - enabled or disabled: the operator's word, which no sync changes;
// - of a capacity or not: at most that many jobs run on it at once, across
//   all its workers (claimed jobs count from their claim).
// A node takes work when it is present and enabled (or not registered at
// all: the registry only restricts the nodes it names). A worker on a node
// that takes no work claims nothing; it drains (its running jobs finish, or
// are released after its --shutdown-timeout) and claims again once the
// node takes work.
//
// A removed node's jobs come back no sooner than the usual recovery: at
// once where its workers' deaths can be proven, otherwise when their leases
// run out, never while a live worker may still run them. `--force` is the
// operator's word that the machine is gone: its workers are released (as
// `warden workers release --force`) and their jobs come back at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warden/job.h"
#include "warden/status.h"

namespace warden {

// The largest capacity accepted: larger is a typo.
inline constexpr int64_t kMaxNodeCapacity = 1'000'000;

// One node of an inventory (or of `warden nodes add`).
struct NodeSpec {
  std::string name;
  std::optional<int64_t> capacity;  // none: no limit
  bool operator==(const NodeSpec&) const = default;
};

struct NodeInfo {
  std::string name;
  bool registered = true;  // false: not in the registry, a live worker's node
  bool present = true;     // false: removed (by a sync or an operator)
  bool enabled = true;
  std::optional<int64_t> capacity;
  TimeMs updated_at = 0;             // 0 when not registered
  std::optional<TimeMs> removed_at;  // when it was removed, if it is
  int64_t running = 0;               // jobs running on its workers
  int64_t live_workers = 0;  // active or draining, that claim (not `warden serve`'s row)
  bool TakesWork() const { return !registered || (present && enabled); }
};

// What a sync changed (or, dry, would change). Names sorted.
struct NodeSyncReport {
  std::vector<std::string> added;     // new in the registry
  std::vector<std::string> revived;   // removed before, present again
  std::vector<std::string> removed;   // present before, not in the inventory
  std::vector<std::string> resized;   // present before and after, capacity changed
  std::vector<std::string> disabled;  // present after and disabled: kept so
  int64_t unchanged = 0;
  bool Changed() const {
    return !added.empty() || !revived.empty() || !removed.empty() || !resized.empty();
  }
};

// A node name: 1 to 253 bytes of letters, digits and `.-_:` (host names,
// FQDNs, cloud instance ids). Errors name the text (at most 40 bytes).
Status CheckNodeName(std::string_view name);
// 1 to kMaxNodeCapacity.
Status CheckNodeCapacity(int64_t capacity);

// A capacity as text: decimal digits (1 to kMaxNodeCapacity), or "-" for
// none (nullopt).
Result<std::optional<int64_t>> ParseNodeCapacity(std::string_view text);

// An inventory: either a JSON array of nodes, each a name or an object
// {"name": N, "capacity": C or null}, or lines of `NAME [CAPACITY]`
// (CAPACITY a whole number or `-` for none; blank lines and `#` comments
// skipped). A name given twice is an error. Errors name the line (text) or
// the element (JSON).
Result<std::vector<NodeSpec>> ParseInventory(std::string_view text);

// "capacity 8", or "no capacity limit".
std::string DescribeCapacity(const std::optional<int64_t>& capacity);

}  // namespace warden
