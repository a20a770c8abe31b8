// warden worker: runs a worker until SIGTERM/SIGINT (a second one releases
// the running jobs at once).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "cli/cli.h"
#include "cli/log_out.h"
#include "cli/service_notify.h"
#include "cli/worker_flags.h"
#include "server/serve.h"
#include "server/worker_endpoint.h"
#include "warden/text.h"
#include "warden/lists.h"

namespace warden::cli {

Result<WorkerOptions> BuildWorkerOptions(const WorkerFlags& f) {
  WorkerOptions o;
  o.name = f.name;
  if (!f.node.empty()) {
    WARDEN_RETURN_IF_ERROR(CheckNodeName(f.node).Annotate("--node"));
    o.node = f.node;
  }
  o.queues = SplitList(f.queues);
  o.concurrency = f.concurrency;
  o.allow_commands = f.allow_cmd;
  o.exit_when_idle = f.exit_when_idle;
  o.inventory_command = f.inventory_command;
  const auto level = ParseLogLevel(f.log_level);
  if (!level) {
    return InvalidArgument("--log-level must be error, warn, info or debug, not '" +
                           OneLine(f.log_level, 40) + "'");
  }
  o.log_level = *level;
  const auto format = ParseLogFormat(f.log_format);
  if (!format) {
    return InvalidArgument("--log-format must be text or json, not '" +
                           OneLine(f.log_format, 40) + "'");
  }
  o.log_format = *format;
  for (const std::string& t : f.tasks) {
    const size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == t.size()) {
      return InvalidArgument("--task wants NAME=COMMAND, got '" + OneLine(t, 60) + "'");
    }
    o.task_commands[t.substr(0, eq)] = t.substr(eq + 1);
  }
  struct {
    const std::string& text;
    const char* flag;
    Millis* out;
  } durations[] = {{f.heartbeat, "--heartbeat", &o.heartbeat},
                   {f.lease, "--lease", &o.lease},
                   {f.keepalive, "--keepalive-threshold", &o.keepalive_threshold},
                   {f.sweep, "--sweep-interval", &o.sweep_interval},
                   {f.shutdown, "--shutdown-timeout", &o.shutdown_timeout},
                   {f.kill_grace, "--kill-grace", &o.kill_grace},
                   {f.poll, "--poll-interval", &o.poll_interval},
                   {f.start, "--start-timeout", &o.start_timeout},
                   {f.inventory_interval, "--inventory-interval", &o.inventory_interval}};
  for (auto& d : durations) {
    if (d.text.empty()) continue;
    WARDEN_ASSIGN_OR_RETURN(*d.out, Duration(d.flag, d.text));
  }
  // The endpoints' addresses now, before the worker opens its database.
  for (const auto& [flag, listen] : {std::pair{"--metrics-listen", &f.metrics_listen},
                                     std::pair{"--health-listen", &f.health_listen}}) {
    std::string host;
    int port = 0;
    if (!listen->empty()) WARDEN_RETURN_IF_ERROR(server::ParseListen(*listen, &host, &port, flag));
  }
  WARDEN_RETURN_IF_ERROR(ValidateWorkerOptions(o));
  return o;
}

namespace {

// What `systemctl status` shows while it runs.
std::string StatusOf(const Worker& w) {
  if (w.id() == 0) return "";  // starting: the phases say it
  const Status ready = w.Ready();
  const WorkerCounters& c = w.counters();
  return "worker " + std::to_string(w.id()) +
         (ready.ok() ? " ready" : " not ready (" + ready.message() + ")") + ": " +
         std::to_string(c.succeeded.load()) + " succeeded, " + std::to_string(c.failed.load()) +
         " failed";
}

int RunWorker(const Globals& g, const WorkerFlags& f) {
  auto options = BuildWorkerOptions(f);
  if (options.has_value() && options->log_format == LogFormat::kJson) {
    SetLogFormat(LogFormat::kJson, {{"worker", f.name}});
  }
  if (!options.has_value()) return Fail(options.error());
  // Said here in the CLI's words (the library's names its own API), and
  // not in BuildWorkerOptions, which `config check` runs on a host that
  // may only serve.
  if (options->task_commands.empty() && !options->allow_commands) {
    return Fail(InvalidArgument(
        "this worker can run nothing: give --task NAME=COMMAND for each task it runs "
        "(e.g. --task resize='convert in.png out.png'), or --allow-cmd to run the "
        "command a job carries (warden add --cmd)"));
  }
  // Before the worker, which tells it its phases until it is destroyed.
  ServiceNotifier notifier;
  options->on_phase = [&notifier](WorkerPhase phase, const std::string& detail) {
    switch (phase) {
      case WorkerPhase::kWaiting:
        return notifier.SetStatus(detail);
      case WorkerPhase::kReady:
        return notifier.Ready(detail);
      case WorkerPhase::kStopping:
        return notifier.Stopping(detail);
    }
  };
  // Signals are taken by one thread with sigwait, so no handler runs inside
  // library code; every other thread inherits the blocked mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  auto worker = Worker::Create(g.db, *options);
  if (!worker.has_value()) return Fail(worker.error());
  Worker* w = worker->get();
  // Its default name ("<host>-<pid>") is known now; no thread runs yet.
  if (options->log_format == LogFormat::kJson) {
    SetLogFormat(LogFormat::kJson, {{"worker", w->name()}});
  }
  // Before Run, so that a bad or busy address fails the command at once.
  auto endpoints = server::StartWorkerEndpoints(
      f.metrics_listen, f.health_listen, *w,
      [](const std::string& line) { LogOut(LogLevel::kInfo, line); });
  if (!endpoints.has_value()) return Fail(endpoints.error());
  std::atomic<bool> exiting{false};
  std::thread signals([w, set, &exiting] {
    int count = 0;
    while (true) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (exiting) return;
      if (sig == SIGHUP && count == 0) continue;  // reserved; ignored for now
      w->Stop(++count > 1);
    }
  });
  notifier.Start([w] { return w->Live(); }, [w] { return StatusOf(*w); });
  Status s = w->Run();
  // Fed until Run returns: a drain can outlast the watchdog's time.
  notifier.Stop();
  // The signal thread must not outlive the worker it stops.
  exiting = true;
  pthread_kill(signals.native_handle(), SIGTERM);
  signals.join();
  for (auto& e : *endpoints) e->Stop(std::chrono::milliseconds(500));
  if (!s.ok()) return Fail(s);
  if (g.json) {
    const WorkerCounters& c = w->counters();
    PrintJson({{"worker", w->id()},
               {"name", w->name()},
               {"succeeded", c.succeeded.load()},
               {"failed", c.failed.load()},
               {"fenced_off", c.fenced.load()},
               {"self_fenced", c.self_fenced.load()},
               {"rescued", c.rescued.load()}});
  }
  return 0;
}

}  // namespace

void AddWorkerFlags(CLI::App* cmd, WorkerFlags& f) {
  cmd->add_option("--queues", f.queues, "comma-separated queues (default: default)");
  cmd->add_option("--concurrency", f.concurrency, "jobs at once (default 8)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--name", f.name, "stable name; a restart recovers its jobs at once");
  cmd->add_option("--node", f.node,
                  "the node it runs on, as the registry names it (default the host name; "
                  "`warden nodes`)");
  cmd->add_flag("--allow-cmd", f.allow_cmd, "run jobs added with --cmd");
  cmd->add_option("--task", f.tasks, "NAME=COMMAND: run task NAME as this command")
      ->allow_extra_args(false);
  cmd->add_option("--heartbeat", f.heartbeat, "heartbeat interval (default 1s)");
  cmd->add_option("--lease", f.lease, "job lease (default 10s)");
  cmd->add_option("--keepalive-threshold", f.keepalive,
                  "silence after which a worker is presumed dead (default 10s)");
  cmd->add_option("--sweep-interval", f.sweep, "maintenance interval (default 1s)");
  cmd->add_option("--shutdown-timeout", f.shutdown,
                  "on SIGTERM, wait this long for jobs (default 30s)");
  cmd->add_option("--start-timeout", f.start,
                  "PostgreSQL: at start, wait this long for a server that cannot be reached "
                  "(default 30s; 0s: fail at once)");
  cmd->add_option("--kill-grace", f.kill_grace, "SIGTERM -> SIGKILL for jobs (default 5s)");
  cmd->add_option("--poll-interval", f.poll, "fallback poll interval (default 1s)");
  cmd->add_option("--log-level", f.log_level,
                  "error | warn | info (default: one line per finished attempt) | debug "
                  "(and per start)");
  cmd->add_option("--log-format", f.log_format,
                  "text (default) | json: one JSON object a line on stderr (time, level, "
                  "worker, job, message)");
  cmd->add_option("--metrics-listen", f.metrics_listen,
                  "ADDR:PORT: serve this worker's /metrics (docs/metrics.md)");
  cmd->add_option("--health-listen", f.health_listen,
                  "ADDR:PORT: serve /healthz and /readyz (503 while draining)");
  cmd->add_option("--inventory-command", f.inventory_command,
                  "as the maintenance leader, sync the node registry to what this command "
                  "prints (as `warden nodes sync --from -`): when it becomes the leader, every "
                  "--inventory-interval, after workers die, when work waits with no worker "
                  "(docs/nodes.md)");
  cmd->add_option("--inventory-interval", f.inventory_interval,
                  "how often the leader runs --inventory-command (default 5m)");
  cmd->add_flag("--exit-when-idle", f.exit_when_idle,
                "exit once no job it can run is available, due, retryable or running (jobs "
                "for other queues or tasks, or scheduled for later, do not keep it)");
}

void AddWorkerCommand(CLI::App& app, Globals& g, Action* action) {
  auto f = std::make_shared<WorkerFlags>();
  CLI::App* cmd = app.add_subcommand("worker", "run a worker until SIGTERM or SIGINT");
  AddWorkerFlags(cmd, *f);
  cmd->callback([f, &g, action] { *action = [f, &g] { return RunWorker(g, *f); }; });
}

}  // namespace warden::cli
