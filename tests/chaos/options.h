// The chaos runner's settings: what to run against, for how long, with
// which faults, and the bounds the checker holds recovery to.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "warden/job.h"

namespace chaos {

using warden::Millis;

enum class FaultKind {
  kKillWorker,      // SIGKILL a worker process; respawn it (same or new name)
  kFreezeWorker,    // SIGSTOP the worker process only, past its lease
  kFreezeHost,      // SIGSTOP the worker and every process under it
  kKillJob,         // SIGKILL a command job's process group
  kSqliteLock,      // another process holds BEGIN EXCLUSIVE for a while
  kPgRestart,       // scripts/pg-cluster.sh restart
  kPgKillBackends,  // pg_terminate_backend on every session of our database
  kPartition,       // a worker host's network cut off past the lease
  kNodeDisable,     // a node disabled (its workers drain), enabled again later
  kNodeRemove,      // a node removed (sync without it, or remove), brought back later
  kNodeForceRemove,  // a node's workers killed, the node removed with --force, brought back
  kNodeResize,       // node-1's capacity changed while its jobs run, set back later
};
const char* FaultName(FaultKind k);
const std::vector<FaultKind>& AllFaultKinds();
// Store faults make the store unavailable for a while (not a worker).
bool IsStoreFault(FaultKind k);
// Node faults change the node registry (docs/nodes.md): one at a time.
bool IsNodeFault(FaultKind k);
// Node faults that have their node take no work while they last (all but
// node-resize, which changes its capacity).
bool ClosesNode(FaultKind k);

enum class Backend { kSqlite, kPostgres };

struct Options {
  // As given: `sqlite` (a fresh file in the run directory), a path to a
  // SQLite file that must not exist yet, `postgresql://...` (a fresh
  // database is created on that server and dropped afterwards), or
  // `pg-private` (a private cluster started with scripts/pg-cluster.sh).
  std::string db;
  Backend backend = Backend::kSqlite;
  bool pg_private = false;
  uint64_t seed = 0;
  Millis duration{45'000};  // the fault window
  int jobs = 2000;
  int workers = 4;
  int concurrency = 8;
  // Flow control: a concurrency limit on a second queue that a share of
  // the jobs go to (workload.h); 0: one queue, no limit.
  int limited_concurrency = 3;
  // Nodes (docs/nodes.md): the workers spread over this many named nodes
  // (`--node node-K`), registered before they start; node-1 gets
  // `node_capacity` (0: none). 0 nodes: no `--node`, no registry, no node
  // faults, no invariant 8.
  int nodes = 2;
  int node_capacity = 8;
  // The workers' --shutdown-timeout: also how long the running jobs of a
  // worker whose node takes no work may finish before they are released.
  Millis shutdown_timeout{1000};
  Millis heartbeat{250}, lease{3000}, sweep{250};
  // Margins over docs/design.md's bounds, for a loaded 2-core machine.
  Millis kill_margin{1000};    // proven death: sweep + this
  Millis freeze_margin{1500};  // unprovable: lease + 2 sweeps + this
  // How long after its worker thaws or dies a stale run may still show
  // activity ("stops them the moment it runs again").
  Millis stale_margin{1000};
  // After the window: how long the backlog may take. 0: the largest of
  // 2 min, the fault window and 50 ms per job.
  Millis drain_timeout{0};
  // During the drain: this long without a job finishing means stuck.
  Millis stall_timeout{90'000};
  Millis fault_gap{2000};      // mean time between two faults
  std::set<FaultKind> faults;  // enabled kinds
  std::string pg_cluster;      // a cluster DIR we may restart (--pg-cluster)
  std::string cluster_script;  // scripts/pg-cluster.sh
  bool partition = false;
  bool keep = false;
  std::string tmp_root = "/tmp";
  std::string warden_bin, worker_bin, job_bin, lock_bin;
  std::vector<std::string> argv;  // as invoked, for the rerun command

  // The command that reruns this run: argv with --seed fixed.
  std::string RerunCommand() const;
};

// Parses argv; on error or --help prints to stderr/stdout and returns the
// exit code in *exit_code (and false).
bool ParseOptions(int argc, char** argv, Options* o, int* exit_code);

}  // namespace chaos
