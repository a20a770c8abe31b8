// When the maintenance leader runs the inventory command (`warden worker
// --inventory-command`, docs/nodes.md): once on becoming the leader, every
// interval after that, at once after workers die (their machine may be
// gone), and at once when work starts waiting that no claiming worker can
// run (a node may have come up that the registry does not know yet). Pure.
//
// "Starts waiting" is an edge: a group of waiting jobs that stays unserved
// asks for one run, not one per pass; it asks again only after it was
// served, or when the interval comes round.
//
// Thread safety: used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "warden/duration.h"

namespace warden {

class InventoryTrigger {
 public:
  explicit InventoryTrigger(Millis interval) : interval_(interval) {}

  // Why to run the command now, or nothing. `deaths`: workers declared dead
  // since the last call; `unserved`: the waiting groups no claiming worker
  // can run, one key each (and their descriptions, for the reason).
  std::optional<std::string> Due(int64_t now_mono, bool leader, int deaths,
                                 const std::set<std::string>& unserved);
  // The command ran (whatever came of it) at `now_mono`.
  void Ran(int64_t now_mono) { last_run_mono_ = now_mono; }

 private:
  Millis interval_;
  std::optional<int64_t> last_run_mono_;  // as the leader; reset when not
  std::set<std::string> unserved_;        // as last seen
};

}  // namespace warden
