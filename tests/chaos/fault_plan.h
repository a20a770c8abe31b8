// The fault schedule: which fault strikes when, generated from the seed
// before the run starts (so a seed names one schedule; real processes still
// decide their own timing).
//
// The plan keeps the run meaningful rather than merely destructive: at most
// half the worker slots are down or frozen at any moment (someone must be
// alive to prove deaths and sweep), store faults never overlap each other,
// and every freeze or cut lasts past the lease, so recovery is needed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "options.h"

namespace chaos {

struct PlannedFault {
  int64_t at_ms = 0;  // after the window opens
  FaultKind kind = FaultKind::kKillJob;
  int slot = -1;                 // worker faults: which worker slot
  int side = -1;                 // partition: which host (0 or 1)
  int64_t duration_ms = 0;       // freeze, lock, partition
  int64_t respawn_after_ms = 0;  // kill-worker
  bool new_name = false;         // kill-worker: respawn under a new name
  uint64_t pick = 0;             // kill-job: which running job
  int node = -1;                 // node faults: which node (0: node-1)
  bool by_sync = false;          // node-remove, node-force-remove: by a sync
                                 // lacking the node, not `nodes remove`
  int64_t capacity = 0;          // node-resize: node-1's capacity meanwhile
};

// Slots [0, command_slots) run `warden worker`, the rest in-process
// workers. `side_of_slot`: each slot's host (partition mode), or empty.
// `node_of_slot`: each slot's node, node-1 .. node-N (NodesOfSlots), or
// empty. Node faults come one at a time; a forced removal kills every
// worker of its node, so it is planned only when they are all up and the
// budget of down slots allows them all.
std::vector<PlannedFault> PlanFaults(const Options& o, int slots,
                                     int command_slots,
                                     const std::vector<int>& side_of_slot,
                                     const std::vector<std::string>& node_of_slot);

}  // namespace chaos
