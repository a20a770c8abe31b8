// The worker processes of a chaos run: `warden worker` (command jobs) and
// warden_chaos_worker (in-process jobs), one per slot, each slot respawned
// after a kill under the same or a new name. Every process that ever ran is
// kept as a ProcRecord for the checker (which maps store worker ids to
// processes by pid and start time).
//
// Thread safety: none; the runner's main thread drives it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "options.h"
#include "sandbox.h"

namespace chaos {

struct ProcRecord {
  int slot = 0;
  std::string name;
  bool command_worker = false;  // `warden worker`; else in-process
  pid_t pid = 0;
  int64_t spawn_ms = 0;
  int64_t end_ms = -1;         // exit seen (or killed), -1 while running
  bool killed_by_us = false;   // a kill-worker fault
  bool stopped_by_us = false;  // the final SIGTERM
  int exit_code = -1;          // 128+signal when killed
  std::string log_path;
  std::string host;  // partition mode: the host name
  std::string node;  // its `--node`, "" for none
};

// A command job's process found under a worker (kill-job fault).
struct JobProcess {
  pid_t pid = 0;  // also its process group
  int64_t job = 0;
  int attempt = 0;
  pid_t worker_pid = 0;
};

struct FleetConfig {
  std::string warden_bin, worker_bin, ledger, queue, dir;
  std::string db_url;  // what the workers get as --db
  int command_workers = 1, inproc_workers = 1, concurrency = 8;
  Millis heartbeat{250}, lease{3000}, sweep{250}, shutdown_timeout{1000};
  std::vector<std::optional<warden::testing::Host>>
      hosts;  // per slot (partition mode)
  std::vector<std::string> nodes;  // per slot: its `--node`; empty: none
};

// The node of each worker slot (slots [0, command_workers) run `warden
// worker`, the rest in-process workers) when `nodes` nodes, node-1 ..
// node-N, share them: the slots taken in turn by kind (cmd-1, inproc-1,
// cmd-2, ...) and cut into N runs as even as can be, so that a node of two
// workers or more has both kinds. Empty when `nodes` is 0.
std::vector<std::string> NodesOfSlots(int command_workers, int inproc_workers, int nodes);

class Fleet {
 public:
  explicit Fleet(FleetConfig config);
  ~Fleet();  // SIGKILLs whatever still runs

  int slots() const { return static_cast<int>(slots_.size()); }
  bool command_slot(int slot) const;
  void StartAll();
  bool Up(int slot) const;  // running (frozen or not)
  bool Frozen(int slot) const;
  // The processes under a frozen worker that a host freeze stopped after
  // they had exec'd: a job's code, past warden's start check.
  const std::vector<pid_t>& FrozenExecd(int slot) const;
  pid_t Pid(int slot) const;
  const std::string& Name(int slot) const;
  // Its `--node` ("" for none).
  std::string Node(int slot) const;

  // SIGKILL and reap; returns the kill time (wall ms), -1 if it was not up.
  int64_t Kill(int slot);
  void Spawn(int slot, bool new_name);
  // SIGSTOPs the worker (with `host`: then every process under it too) once
  // all its threads are stopped. `between_transactions`, when given, is
  // asked right after the worker stopped; false means it was caught holding
  // the store's write lock: it is thawed and tried again (up to 20 times).
  // Returns the time the final freeze began (wall ms), or -1.
  int64_t Freeze(int slot, bool host,
                 const std::function<bool()>& between_transactions);
  // SIGCONT the worker, then what was frozen under it. Returns the time.
  int64_t Thaw(int slot);
  std::vector<JobProcess> JobProcesses() const;
  // Reaps exited children. Returns the records of workers that exited
  // without our kill since the last call (the caller respawns them).
  std::vector<ProcRecord> Poll();
  // SIGTERM every worker (thawing frozen ones), wait up to `timeout`, then
  // SIGKILL the rest. Returns the names of those that did not stop in time.
  std::vector<std::string> StopAll(Millis timeout);

  const std::vector<ProcRecord>& records() const { return records_; }

 private:
  struct Slot {
    std::string base, name;
    int generation = 1;
    bool command = false;
    std::unique_ptr<warden::testing::Child> proc;
    size_t record = 0;  // index into records_
    bool frozen = false;
    std::vector<pid_t> frozen_under;  // host freezes
    std::vector<pid_t> frozen_execd;  // of those, the ones that had exec'd
  };
  void Finish(Slot& s, int64_t at);

  FleetConfig cfg_;
  std::vector<Slot> slots_;
  std::vector<ProcRecord> records_;
};

// Processes under this one (the runner is a child subreaper, so orphans
// count) that still run, described ("pid 123 warden_chaos_job job 45"),
// except PostgreSQL server processes: a cluster the run started through
// pg-cluster.sh is re-parented to us and is stopped by its own script.
std::vector<std::pair<pid_t, std::string>> LeftoverProcesses();

}  // namespace chaos
