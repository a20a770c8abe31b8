#include "fault_plan.h"

#include <algorithm>
#include <utility>

#include "rng.h"

namespace chaos {
namespace {

double Weight(FaultKind k) {
  switch (k) {
    case FaultKind::kKillWorker:
      return 3;
    case FaultKind::kFreezeWorker:
      // The freeze that strikes between a job's start check and its start
      // (issue 18): more of them than of the other worker faults.
      return 3.5;
    case FaultKind::kFreezeHost:
      return 1.5;
    case FaultKind::kKillJob:
      return 2.5;
    case FaultKind::kSqliteLock:
      return 1.5;
    case FaultKind::kPgRestart:
      return 1;
    case FaultKind::kPgKillBackends:
      return 1.5;
    case FaultKind::kPartition:
      return 1;
    // A closed node takes half the fleet's work away while it lasts: fewer
    // of them, so that the short runs keep their time.
    case FaultKind::kNodeDisable:
    case FaultKind::kNodeRemove:
      return 1;
    case FaultKind::kNodeForceRemove:
      return 0.75;
    case FaultKind::kNodeResize:
      return 1;
  }
  return 0;
}

}  // namespace

std::vector<PlannedFault> PlanFaults(const Options& o, int slots,
                                     int command_slots,
                                     const std::vector<int>& side_of_slot,
                                     const std::vector<std::string>& node_of_slot) {
  Rng r = Rng(o.seed).Fork(2);
  std::vector<FaultKind> kinds(o.faults.begin(), o.faults.end());
  const int64_t lease = o.lease.count();
  const int max_down = std::max(1, slots / 2);
  std::vector<int64_t> down_until(static_cast<size_t>(slots), 0);
  int64_t store_busy_until = 0;
  int64_t node_busy_until = 0;
  // The slots of node `n` (0: node-1).
  auto slots_of_node = [&](int n) {
    std::vector<int> out;
    std::string name = "node-";
    name += std::to_string(n + 1);
    for (int s = 0; s < static_cast<int>(node_of_slot.size()); ++s) {
      if (node_of_slot[static_cast<size_t>(s)] == name) out.push_back(s);
    }
    return out;
  };
  auto down_at = [&](int64_t t) {
    return static_cast<int>(std::count_if(down_until.begin(), down_until.end(),
                                          [t](int64_t u) { return u > t; }));
  };

  // A forced removal kills a node's workers at once: never planned when
  // every node has more of them than half the fleet (it would wait for
  // its turn in the first round for ever).
  bool force_possible = false;
  for (int n = 0; n < o.nodes; ++n) {
    const size_t workers = slots_of_node(n).size();
    force_possible = force_possible || (workers > 0 && static_cast<int>(workers) <= max_down);
  }
  if (!force_possible) std::erase(kinds, FaultKind::kNodeForceRemove);
  double total = 0;
  for (FaultKind k : kinds) total += Weight(k);

  std::vector<PlannedFault> plan;
  if (kinds.empty()) return plan;
  std::vector<FaultKind> first_round = kinds;
  for (size_t i = first_round.size(); i > 1; --i) {
    const auto j = static_cast<size_t>(r.Range(0, static_cast<int64_t>(i) - 1));
    std::swap(first_round[i - 1], first_round[j]);
  }
  const int64_t window = o.duration.count();
  for (int64_t t = r.Range(500, 1500); t < window - 500;
       t += static_cast<int64_t>(static_cast<double>(o.fault_gap.count()) *
                                 (0.4 + 1.2 * r.Unit()))) {
    // Every kind once first (in a seeded order), so that even a short run
    // exercises them all; then by weight.
    FaultKind kind = kinds.back();
    const bool from_first_round = !first_round.empty();
    if (from_first_round) {
      kind = first_round.back();
      first_round.pop_back();
    } else {
      double x = r.Unit() * total;
      for (FaultKind k : kinds) {
        if ((x -= Weight(k)) < 0) {
          kind = k;
          break;
        }
      }
    }
    PlannedFault f;
    f.at_ms = t;
    f.kind = kind;
    f.pick = r.Next();
    if (IsStoreFault(kind)) {
      if (t < store_busy_until) {  // one store fault at a time
        if (from_first_round) first_round.insert(first_round.begin(), kind);
        continue;
      }
      if (kind == FaultKind::kSqliteLock) {
        // Some shorter than self-fencing (3/4 lease), some well past it.
        f.duration_ms = r.Range(300, lease * 8 / 5);
      }
      store_busy_until =
          t + f.duration_ms + (kind == FaultKind::kPgRestart ? 5000 : 1000);
      plan.push_back(f);
      continue;
    }
    if (kind == FaultKind::kKillJob) {
      plan.push_back(f);
      continue;
    }
    if (IsNodeFault(kind)) {
      const int nodes = std::max(1, o.nodes);
      // node-1 is the node with a capacity.
      f.node = kind == FaultKind::kNodeResize ? 0 : static_cast<int>(r.Range(0, nodes - 1));
      f.by_sync = r.Chance(0.5);
      bool ok = t >= node_busy_until;
      if (ok && kind == FaultKind::kNodeForceRemove) {
        // Its workers are killed first: a node all of whose workers are up,
        // and whose loss the budget of down slots allows.
        const int first = f.node;
        f.node = -1;
        for (int i = 0; i < nodes && f.node < 0; ++i) {
          const int n = (first + i) % nodes;
          const std::vector<int> mine = slots_of_node(n);
          const bool all_up = std::all_of(mine.begin(), mine.end(), [&](int s) {
            return down_until[static_cast<size_t>(s)] <= t;
          });
          if (!mine.empty() && all_up &&
              down_at(t) + static_cast<int>(mine.size()) <= max_down) {
            f.node = n;
          }
        }
        ok = f.node >= 0;
      }
      if (!ok) {
        if (from_first_round) first_round.insert(first_round.begin(), kind);
        continue;
      }
      if (kind == FaultKind::kNodeForceRemove) {
        // Until `nodes add` brings it back (its workers respawn meanwhile,
        // on a removed node, or after).
        f.duration_ms = r.Range(500, 3000);
        f.respawn_after_ms = r.Range(0, 1500);
        f.new_name = r.Chance(0.5);
        for (int s : slots_of_node(f.node)) {
          down_until[static_cast<size_t>(s)] = t + f.respawn_after_ms + 1000;
        }
      } else if (kind == FaultKind::kNodeResize) {
        // Lowered (what runs goes on over it: no claim until below it) or
        // raised (more at once), for long enough that jobs end and start.
        const int64_t cap = o.node_capacity;
        f.capacity = r.Range(1, 2 * cap - 1);
        if (f.capacity >= cap) ++f.capacity;
        f.duration_ms = r.Range(1000, 4000);
      } else {
        // Some shorter than the workers' --shutdown-timeout (the node takes
        // work again while its jobs drain), most longer (they are released).
        f.duration_ms = r.Range(500, 2500);
      }
      node_busy_until = t + f.duration_ms + 1000;
      plan.push_back(f);
      continue;
    }
    if (kind == FaultKind::kPartition) {
      f.side = static_cast<int>(r.Range(0, 1));
      f.duration_ms = lease + r.Range(500, 3000);
      std::vector<int> cut;
      for (int s = 0; s < slots; ++s) {
        if (side_of_slot.at(static_cast<size_t>(s)) == f.side) cut.push_back(s);
      }
      // Only with every other worker healthy: the cut takes half of them.
      if (down_at(t) > 0) {
        if (from_first_round) first_round.insert(first_round.begin(), kind);
        continue;
      }
      for (int s : cut) down_until[static_cast<size_t>(s)] = t + f.duration_ms;
      plan.push_back(f);
      continue;
    }
    // Worker faults: a slot that is up, if the budget of down slots allows.
    if (down_at(t) >= max_down) {
      if (from_first_round) first_round.insert(first_round.begin(), kind);
      continue;
    }
    // A host freeze matters where jobs run as processes: on a command slot
    // if one is up.
    const int start = static_cast<int>(r.Range(0, slots - 1));
    for (int pass = kind == FaultKind::kFreezeHost ? 0 : 1;
         pass < 2 && f.slot < 0; ++pass) {
      for (int i = 0; i < slots; ++i) {
        const int s = (start + i) % slots;
        if (down_until[static_cast<size_t>(s)] <= t &&
            (pass == 1 || s < command_slots)) {
          f.slot = s;
          break;
        }
      }
    }
    if (kind == FaultKind::kKillWorker) {
      f.respawn_after_ms = r.Range(0, 1500);
      f.new_name = r.Chance(0.5);
      down_until[static_cast<size_t>(f.slot)] = t + f.respawn_after_ms + 500;
    } else {
      f.duration_ms = lease + r.Range(300, 2500);
      down_until[static_cast<size_t>(f.slot)] = t + f.duration_ms + 500;
    }
    plan.push_back(f);
  }
  return plan;
}

}  // namespace chaos
