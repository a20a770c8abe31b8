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
#include "store_faults.h"

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
  std::unique_ptr<AsyncCommand> helper_;  // lock holder or restart
  size_t helper_record_ = 0;
  int seq_ = 0;
};

}  // namespace chaos
