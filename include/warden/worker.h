// Worker: claims jobs and runs them, with leases, heartbeats, self-fencing
// and the sweeper (docs/design.md, "Workers, leases and recovery").
//
//   warden::WorkerOptions opts;
//   opts.queues = {"default"};
//   auto worker = warden::Worker::Create("sqlite:jobs.db", opts);
//   (*worker)->Handle("resize", [](warden::JobContext& ctx) {
//     int w = ctx.payload()["width"];
//     ...
//     ctx.SetResult({{"ok", true}});
//     return warden::Status::Ok();
//   });
//   warden::Status s = (*worker)->Run();   // until Stop()
//
// Handlers run on the worker's threads (`concurrency` at once). A handler
// cannot be killed: it must check ctx.stop_requested() in long loops and
// return when it is set (cancelled, timed out, fenced off, or released by
// shutdown). A handler that ignores it holds its slot, keeps its job
// `running`, and keeps Run() from returning at shutdown. Jobs that must be
// killable run as commands.
//
// Thread safety: Handle() before Run(); Stop() from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "warden/job.h"
#include "warden/log.h"
#include "warden/status.h"

namespace warden {

class JobContext {
 public:
  virtual ~JobContext() = default;
  virtual JobId id() const = 0;
  virtual const std::string& task() const = 0;
  virtual int attempt() const = 0;
  // The fencing token of this attempt: pass it to downstream writes so a
  // stale run's writes can be refused there too.
  virtual int64_t lease_token() const = 0;
  virtual const Json& payload() const = 0;
  // The last checkpoint saved by any attempt (null if none).
  virtual const Json& checkpoint() const = 0;
  // Durably saves progress. Fails with kFailedPrecondition when this attempt
  // has been fenced off or must stop (see stop_requested), in which case the
  // handler should return: it waits for the store only while the job may go
  // on (a write held up by a locked database goes on in the background, and
  // lands or is refused later). Other errors are the store's (kUnavailable:
  // busy, locked or gone) and may be retried.
  virtual Status SaveCheckpoint(const Json& checkpoint) = 0;
  virtual void SetResult(Json result) = 0;
  // Cancelled, timed out, fenced off or released by shutdown.
  virtual bool stop_requested() const = 0;
};

using Handler = std::function<Status(JobContext&)>;

// Where a worker is in its life (WorkerOptions::on_phase).
enum class WorkerPhase { kWaiting, kReady, kStopping };

struct WorkerOptions {
  std::string name;  // stable label; default "<host>-<pid>"
  // The node it runs on (warden/nodes.h: its registry entry, capacity and
  // enabled flag); default the host name. Deaths are still proven by host.
  std::string node;
  std::vector<std::string> queues = {"default"};
  int concurrency = 8;
  bool allow_commands = false;                       // run `--cmd` jobs
  std::map<std::string, std::string> task_commands;  // task -> shell command
  // The program that supervises each command job (warden-shim, installed
  // with warden). Empty: looked for beside the running program, in its
  // ../libexec/warden, then where warden installs it; where there is none,
  // the worker forks itself for each job instead, which runs the same
  // supervision more slowly (docs/design.md, "Running a job").
  std::string command_shim;
  Millis heartbeat{1000};
  Millis lease{10'000};
  Millis keepalive_threshold{10'000};
  Millis sweep_interval{1000};
  Millis shutdown_timeout{30'000};
  // At start, how long Run retries a database server it cannot reach (one
  // restarting, failing over, refusing connections) before it gives up;
  // 0: give up at once. Errors that waiting cannot mend (a newer schema, a
  // refused password, a database that does not exist) are never retried,
  // nor an embedded SQLite file's (read-only, full, locked past its busy
  // timeout): PostgreSQL only.
  Millis start_timeout{30'000};
  Millis kill_grace{5000};      // SIGTERM -> SIGKILL for command jobs
  Millis poll_interval{1000};   // fallback when no wake-up arrives
  Millis flush_window{2};       // completions are batched this long
  Millis retention{7LL * 24 * 3600 * 1000};
  // Take part in maintenance only, as `warden serve` does: register,
  // heartbeat, prove the deaths of processes on this host, sweep, and lead
  // maintenance when it falls to this worker, but claim nothing. No handler
  // is needed; queues, concurrency, commands and exit_when_idle are unused.
  // Its row says concurrency 0, which every listing, count and metric reads
  // as a worker that serves no work.
  bool maintenance_only = false;
  // Return from Run() once nothing it could run is left: no job on its
  // queues, of its tasks (or a command job, with allow_commands), is
  // available, retryable, due or running. Jobs scheduled for later, and
  // jobs it could never run, are named in its last log line.
  bool exit_when_idle = false;
  // The maintenance leader runs this command (/bin/sh -c) and syncs the
  // node registry to the inventory it prints, as `warden nodes sync --from
  // -` would (docs/nodes.md): on becoming the leader, every
  // inventory_interval, and at once after workers are declared dead or when
  // work starts waiting that no worker can run. Empty: never.
  std::string inventory_command;
  Millis inventory_interval{5 * 60 * 1000};
  // Log lines go here (default: stderr with a timestamp), those at
  // `log_level` or more important: the message alone.
  std::function<void(const std::string&)> log;
  // Instead of `log`, when given: each line's whole record, its level,
  // job and fields, for a caller that writes lines of its own (`warden
  // serve` logs its maintenance worker's trouble at warn, not as info).
  std::function<void(const LogRecord&)> log_record;
  LogLevel log_level = LogLevel::kInfo;
  // On stderr (when `log` is not given): text, or one JSON object a line
  // (warden/log.h), with the worker's name and id and, on lines about a
  // job, its id.
  LogFormat log_format = LogFormat::kText;
  // Told where the worker is in its life, for a service manager (`warden
  // worker` tells systemd: READY=1, STOPPING=1, STATUS=): kWaiting while a
  // database server it cannot reach yet is waited for (start_timeout),
  // kReady once it is registered and its claim loop starts, kStopping when
  // it stops claiming (Stop(), or exit_when_idle, or a damaged database),
  // each at most once; `detail` is one line for a person. Called on
  // whichever of the worker's threads (or Stop()'s caller) gets there:
  // keep it short, and do not call back into the Worker.
  std::function<void(WorkerPhase phase, const std::string& detail)> on_phase;
};

// The checks Worker::Create makes of `options` before it opens anything
// (ranges, and durations that must agree: a lease of at least three
// heartbeats); for tools that check a configuration without starting a
// worker (`warden config check`).
Status ValidateWorkerOptions(const WorkerOptions& options);

struct WorkerCounters {
  std::atomic<int64_t> succeeded{0};
  std::atomic<int64_t> failed{0};
  std::atomic<int64_t> fenced{0};       // outcomes refused by fencing
  std::atomic<int64_t> self_fenced{0};  // runs stopped by self-fencing
  std::atomic<int64_t> rescued{0};      // jobs this worker's sweeps recovered
  // Jobs claimed beyond the free slots, for slots that would finish their
  // short jobs while the claim was on its way (core/claim_ahead.h).
  std::atomic<int64_t> claimed_ahead{0};
};

class Worker {
 public:
  static Result<std::unique_ptr<Worker>> Create(const std::string& db_url,
                                                WorkerOptions options);
  ~Worker();

  void Handle(const std::string& task, Handler handler);
  // Registers (recovering a dead previous incarnation of the same name),
  // then claims and runs jobs until Stop() (or idle, with exit_when_idle).
  // A database it cannot reach yet is retried for start_timeout; a Stop()
  // meanwhile returns Ok at once.
  // Fails if a live worker already has this name. Stops by itself, after
  // a graceful shutdown, and returns kDataLoss when a claim finds the
  // database damaged: retrying would not mend it.
  Status Run();
  // First call: graceful (drain up to shutdown_timeout, then release).
  // With release_now (or a second call): release running jobs at once.
  void Stop(bool release_now = false);

  WorkerId id() const;
  const std::string& name() const;  // as given, or "<host>-<pid>"
  const WorkerCounters& counters() const;
  // This process's metrics in the Prometheus text format (docs/metrics.md):
  // what `warden worker --metrics-listen` serves.
  std::string ExportMetrics();
  // Ok while registered, not draining, and its heartbeats are written:
  // what `--health-listen`'s /readyz answers.
  Status Ready() const;
  // Ok unless the process is wedged: what systemd's watchdog is fed by
  // (`warden worker` sends WATCHDOG=1 only while this is Ok) and what
  // `--health-listen`'s /healthz answers. Judged by the worker's own
  // watchdog thread, which never waits on the database: it stops each job
  // that cannot prove its lease (self-fencing) and takes the lock every
  // loop shares, so it stops turning only if the process itself is stuck
  // (that lock held for good, the process starved). A database that does
  // not answer is not judged: the threads waiting on it are doing what
  // they should, its jobs are self-fenced, and a restart would wait for the
  // same database. Ok before Run and after its threads end (the start and
  // the goodbye are bounded by their own timeouts).
  Status Live() const;

  class Impl;

 private:
  friend struct WorkerFactory;  // builds one on other seams (runtime/worker_seams.h)
  explicit Worker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace warden
