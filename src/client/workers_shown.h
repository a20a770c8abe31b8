// The worker rows as every surface shows them: each live one marked silent
// when its heartbeat went unrenewed past its keepalive by the store's clock
// (warden/worker_silence.h), and marked when its node is registered and
// disabled or removed. A display, never a verdict: nothing here is used by
// recovery (maintenance reads the store itself).
#pragma once

#include <vector>

#include "store/store.h"
#include "warden/job.h"
#include "warden/nodes.h"

namespace warden {

struct ShownWorkers {
  TimeMs now = 0;  // the store's clock, read before the rows
  std::vector<WorkerInfo> workers;
  std::vector<NodeInfo> nodes;  // the registry, as Store::NodeList reads it
};

// `live_only`: active and draining rows only (Store::WorkerList).
Result<ShownWorkers> ReadShownWorkers(Store& store, bool live_only);

}  // namespace warden
