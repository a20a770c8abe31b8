#include "core/inventory_trigger.h"

#include "warden/plural.h"

namespace warden {

std::optional<std::string> InventoryTrigger::Due(int64_t now_mono, bool leader, int deaths,
                                                 const std::set<std::string>& unserved) {
  if (!leader) {
    last_run_mono_.reset();
    unserved_.clear();
    return std::nullopt;
  }
  std::string newly;
  for (const std::string& key : unserved) {
    if (!unserved_.count(key)) newly += (newly.empty() ? "" : "; ") + key;
  }
  unserved_ = unserved;
  if (!last_run_mono_) return "now the maintenance leader";
  if (deaths > 0) return Plural(deaths, "worker") + " declared dead";
  if (!newly.empty()) return "work waits that no worker can run (" + newly + ")";
  if (now_mono - *last_run_mono_ >= interval_.count()) return "every " + FormatDuration(interval_);
  return std::nullopt;
}

}  // namespace warden
