// The maintenance leader's inventory command (`warden worker
// --inventory-command`, docs/nodes.md): run it, read what it prints as
// `warden nodes sync --from -` reads an inventory, and apply that as the
// sync does. Never with --force (an inventory can be wrong: a removed
// node's jobs come back by the usual recovery) and never an empty
// inventory (a command that failed quietly would remove the fleet).
// core/inventory_trigger.h decides when.
//
// Thread safety: stateless functions; the Store decides.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "env/env.h"
#include "store/store.h"
#include "warden/backlog.h"
#include "warden/nodes.h"

namespace warden {

// An inventory command that takes longer is stopped, and nothing applied.
inline constexpr Millis kInventoryTimeout{30'000};

struct InventoryCommand {
  std::string command;  // run as /bin/sh -c COMMAND
  Millis timeout = kInventoryTimeout;
  std::string actor;  // the audit log's actor for the sync
};

// What an inventory command may print; more is refused, as it cannot be
// told from output cut short.
inline constexpr size_t kMaxInventoryBytes = 1 << 20;

// Runs `c` and applies its inventory. An error says why nothing was
// applied: the command could not start, failed, timed out or was stopped
// (`stop`), printed too much, or printed what is not an inventory or an
// empty one; or the sync itself failed.
Result<NodeSyncReport> RunInventoryCommand(Store& store, Env& env, const InventoryCommand& c,
                                           StopSignal& stop);

// Workers that claim: active ones (a draining worker claims nothing more)
// on a node that takes work (warden/nodes.h).
Result<std::vector<Serving>> ClaimingWorkers(Store& store);

// The groups of available jobs no claiming worker can run, one key each
// ("queue Q, task T", "queue Q, command jobs").
Result<std::set<std::string>> UnservedWork(Store& store);

// "added a, b; removed c; 3 nodes unchanged".
std::string DescribeSync(const NodeSyncReport& r);

}  // namespace warden
