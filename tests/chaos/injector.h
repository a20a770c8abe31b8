// Carries out the fault schedule against the fleet and the store, at the
// planned times, and records what was really done (and when, on the wall
// clock the store and the ledger share) for the checker.
//
// Thread safety: none; the runner's main thread calls Tick every few ms.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fault_plan.h"
#include "fleet.h"
#include "node_admin.h"
#include "store_faults.h"
#include "warden/nodes.h"

namespace chaos {

struct FaultRecord {
  FaultKind kind = FaultKind::kKillJob;
  int64_t planned_ms = 0;              // offset into the window
  int64_t start_ms = -1, end_ms = -1;  // wall ms; instant faults: end = start
  std::vector<pid_t> pids;             // worker processes hit
  // freeze-host: the processes under the worker that it stopped too and
  // that had exec'd (jobs past warden's start check, already going).
  std::vector<pid_t> frozen_execd;
  std::string target;                  // worker name(s), job, ...
  int64_t job = 0;                     // kill-job
  std::string detail;
  bool skipped = false;
  // Node faults: the node, and when it certainly took no work: from the
  // return of the call that closed it (disabled or removed: committed by
  // then) to the first try of the call that opened it again (not
  // committed before). -1: never closed (skipped). For node-disable and
  // node-remove, start is that return and end the reopening's return; a
  // node-force-remove starts with the kill of its workers (pids).
  std::string node;
  int64_t close_sent = -1;  // the closing call was posted (before it committed)
  int64_t closed_from = -1, closed_until = -1;
  int workers_released = 0;  // node-force-remove: by the removal itself
  int64_t jobs_recovered = 0;
  // node-resize: the capacity it set, and when each change was made (from
  // its call's first try to its answer): to `resized_to`, then back. -1:
  // not made. A resize whose call failed may have committed all the same.
  int64_t resized_to = -1;
  int64_t resize_sent = -1, resize_done = -1;
  bool resize_failed = false;
  int64_t restore_sent = -1, restore_done = -1;
};

// What store faults act on.
struct StoreTarget {
  std::string sqlite_path;          // SQLite: the file
  std::string pg_admin_url, pg_db;  // PostgreSQL: our database on this server
  std::string cluster_script, cluster_dir;  // restart (empty: not allowed)
  std::string cluster_netns;                // partition mode: where it runs
  std::string ip_tool;
  pt::Network* network = nullptr;  // partition mode
  std::vector<int> side_of_slot;   // partition mode
};

class Injector {
 public:
  using SayFn = std::function<void(const std::string&)>;
  Injector(const Options& o, Fleet& fleet, StoreTarget store,
           std::vector<PlannedFault> plan, std::string dir, SayFn say);
  // Starts what is due, ends what is over. `window_start`: wall ms.
  void Tick(int64_t window_start);
  // The window closed: no fault starts any more; waits until those under
  // way are over (thawed, healed, respawned, helpers exited).
  void CloseWindow();
  const std::vector<FaultRecord>& records() const { return records_; }
  // Whether a store fault is under way (its helper still runs).
  bool StoreFaultActive() const;
  // Node faults: who makes the registry's changes, and the registry as
  // the run set it up (every node present and enabled, node-1's capacity):
  // what a sync brings back. Without them node faults are skipped.
  void SetNodes(NodeAdmin* admin, std::vector<warden::NodeSpec> inventory);

 private:
  struct Timed {
    int64_t at = 0;  // wall ms
    int slot = -1;
    size_t record = 0;
    bool new_name = false;
  };
  // Follows the lock holder or restart under way; records its times once
  // it is over.
  void PollHelper();
  void Start(const PlannedFault& f);
  // The planned slot, or the next worker running and not frozen; -1 (the
  // fault skipped) when none is, or half the fleet is already down.
  int PickRunningWorker(const PlannedFault& f, FaultRecord& r);
  void KillWorker(const PlannedFault& f, FaultRecord& r);
  void FreezeWorker(const PlannedFault& f, FaultRecord& r, bool host);
  void KillJob(const PlannedFault& f, FaultRecord& r);
  void StartPartition(const PlannedFault& f, FaultRecord& r);
  void EndPartition(size_t record);
  void StartNodeFault(const PlannedFault& f, FaultRecord& r);
  // A registry change of the node fault under way finished.
  void NodeChangeDone(const NodeAdmin::Done& d);
  void OpenNode();
  int DownCount() const;
  // SQLite: whether a write transaction can begin within a short wait.
  bool SqliteWritable() const;

  const Options& o_;
  Fleet& fleet_;
  StoreTarget store_;
  std::vector<PlannedFault> plan_;
  size_t next_ = 0;
  std::string dir_;
  SayFn say_;
  std::vector<FaultRecord> records_;
  std::vector<Timed> thaws_, respawns_;
  std::optional<Timed> heal_;
  std::vector<int> cut_slots_;
  std::deque<PlannedFault> deferred_;     // freezes waiting for a lock to end
  std::deque<PlannedFault> deferred_nodes_;  // node faults waiting for one to end
  std::unique_ptr<AsyncCommand> helper_;  // lock holder or restart
  size_t helper_record_ = 0;
  NodeAdmin* admin_ = nullptr;
  std::vector<warden::NodeSpec> inventory_;
  // The node fault under way (one at a time): closing (its change posted),
  // closed (until open_at), opening (its reopening posted).
  struct NodeFault {
    PlannedFault plan;
    size_t record = 0;
    std::string node;
    enum { kClosing, kClosed, kOpening } phase = kClosing;
    int ticket = 0;
    int64_t open_at = 0;
    std::vector<int> killed;  // node-force-remove: the slots it killed
  };
  std::optional<NodeFault> node_fault_;
  int seq_ = 0;
};

}  // namespace chaos
