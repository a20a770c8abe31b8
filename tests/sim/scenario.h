// Scenario: everything a run will do, drawn from its seed before it starts
// (the backend's shape, the timings, the workers and their clocks, the jobs
// and how each attempt behaves, the faults and operator actions). Drawing it
// up front keeps the run deterministic and makes a trace readable: the plan
// is printed first.
//
// Times are true (simulated) microseconds from the start of the run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim_options.h"
#include "warden/job.h"

namespace warden::sim {

using SimUs = int64_t;
constexpr SimUs kUsPerMs = 1000;
inline SimUs FromMs(int64_t ms) { return ms * kUsPerMs; }

// SQLite: one host, one file; every worker's process death is provable by
// the others on the host (pidfd) unless it runs in another pid namespace;
// store calls may wait for the write lock (then fail after the busy timeout,
// without effect) but never lose a reply.
// PostgreSQL: one host per worker; a killed worker's session lock vanishes
// at once (provable after a 250 ms confirmation), a lost host's only after
// lease + TCP keepalive; calls may be delayed, replies lost, hosts cut off.
enum class Backend { kSqlite, kPostgres };

struct Timings {
  Millis heartbeat{1000};
  Millis lease{10'000};
  Millis keepalive{10'000};
  Millis sweep{1000};
  Millis poll{1000};
  Millis flush_window{2};
  Millis shutdown_timeout{2000};
  Millis call_timeout{10'000};     // PostgreSQL: tcp_user_timeout; SQLite: busy timeout
  Millis session_keepalive{6000};  // PostgreSQL: 3 probes 2 s apart, after the idle time
  Millis max_net_delay{5};         // one way, on a healthy network
  int busy_percent = 1;            // calls failing at once (locked, conflict)
  Millis max_kill_latency{20};     // a stop request until the job's process is gone
};

// The maintenance leader lease (SweeperLoop): 3 sweep intervals, never
// longer than the lease.
inline Millis LeaderTtl(const Timings& t) { return std::min(t.sweep * 3, t.lease); }

// PostgreSQL (PgSession::SetKeepAlive): the server ends a silent session
// after tcp_keepalives_idle = max(5 s, its keepalive lease in whole seconds)
// plus the probes.
inline Millis SessionDropAfter(const Timings& t, Millis keepalive_lease) {
  const int64_t idle_s = std::max<int64_t>(5, (keepalive_lease.count() + 999) / 1000);
  return Millis(idle_s * 1000) + t.session_keepalive;
}

struct WorkerPlan {
  std::string name;
  int node = 0;
  int pid_ns = 0;
  int64_t drift_ppm = 0;  // its monotonic clock runs at (1 + ppm/1e6) x true time
  int concurrency = 1;
  SimUs start_at = 0;
};

// How attempt n of a job behaves: a hash of (seed, job, attempt), so it does
// not depend on which worker runs it or when.
struct JobPlan {
  JobSpec spec;  // only the fields the protocol reads are set
  SimUs enqueue_at = 0;
  int failing_attempts = 0;    // the first n attempts fail...
  bool fail_by_crash = false;  // ...by a crash (signal) rather than an error
  int64_t min_run_ms = 0, max_run_ms = 0;
  bool checkpoints = false;  // writes one checkpoint half-way
};

enum class FaultKind {
  kPause,       // frozen VM / SIGSTOP of the worker and its jobs: all stop, the clock goes on
  kWorkerPause,  // SIGSTOP of the worker alone: its threads stop, its jobs' processes run on
  kSuspend,     // host suspend: as kPause (the worker's clock, CLOCK_BOOTTIME, goes on)
  kKill,        // SIGKILL / OOM: process gone; provable if someone can see it
  kPowerLoss,   // host gone: not provable (PostgreSQL: session dropped after lease + keepalive)
  kPartition,   // host cut off from the store; it runs on
  kFlaky,       // calls slow (up to seconds) and replies lost for a while
  kDrain,       // graceful shutdown (SIGTERM), then maybe a restart
  kSessionCut,  // PostgreSQL: session lock lost while alive, slow to come back (known issue)
};
const char* FaultName(FaultKind k);

struct FaultPlan {
  FaultKind kind = FaultKind::kPause;
  int worker = 0;  // WorkerPlan index; hits its incarnation alive then
  SimUs at = 0;
  SimUs duration = 0;                  // pause, partition, flaky, session cut
  // Pauses and suspends: from the worker's first job spawn after `at` (the
  // moment the chaos run caught: spawned, its job's process not yet at work).
  bool at_spawn = false;
  std::optional<SimUs> restart_after;  // kill, power loss, drain
};

enum class OperatorKind { kCancel, kRetry };
struct OperatorPlan {
  OperatorKind kind = OperatorKind::kCancel;
  int job = 0;  // JobPlan index
  SimUs at = 0;
};

// The store's wall clock (the `now` of every store call) steps by `by`
// (NTP, a VM resumed); the workers' monotonic clocks do not.
struct ClockStep {
  SimUs at = 0;
  Millis by{0};  // forward when positive
};

struct Scenario {
  uint64_t seed = 0;
  Backend backend = Backend::kSqlite;
  Timings t;
  std::vector<WorkerPlan> workers;
  std::vector<JobPlan> jobs;
  std::vector<FaultPlan> faults;
  std::vector<OperatorPlan> ops;
  std::vector<ClockStep> clock_steps;  // in order
  SimUs faults_end = 0;  // after this, no more faults: the system must settle
  SimUs give_up_at = 0;  // jobs still unfinished then are stuck

  std::string Describe() const;
};

Scenario DrawScenario(const RunOptions& options);

}  // namespace warden::sim
