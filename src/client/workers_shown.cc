#include "client/workers_shown.h"

#include <set>
#include <string>

#include "warden/worker_silence.h"

namespace warden {

Result<ShownWorkers> ReadShownWorkers(Store& store, bool live_only) {
  ShownWorkers out;
  // The clock first: a heartbeat that lands between the two reads is then
  // newer than `now`, so it can only make a worker look less silent.
  WARDEN_ASSIGN_OR_RETURN(out.now, store.Now());
  WARDEN_ASSIGN_OR_RETURN(out.nodes, store.NodeList());
  WARDEN_ASSIGN_OR_RETURN(out.workers, store.WorkerList(live_only));
  MarkSilentWorkers(out.workers, out.now);
  std::set<std::string> closed;
  for (const NodeInfo& n : out.nodes) {
    if (!n.TakesWork()) closed.insert(n.name);
  }
  for (WorkerInfo& w : out.workers) w.node_disabled = closed.count(w.node) > 0;
  return out;
}

}  // namespace warden
