// The flags of `warden worker`, apart from running one: `warden config
// check` builds a worker's options through the same flags and checks,
// from the environment and warden.toml (cli/config/settings.h).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "warden/warden.h"

namespace warden::cli {

struct WorkerFlags {
  std::string queues = "default", name, node;
  int concurrency = 8;
  bool allow_cmd = false, exit_when_idle = false;
  std::vector<std::string> tasks;
  std::string heartbeat, lease, keepalive, sweep, shutdown, kill_grace, poll, start;
  std::string inventory_command, inventory_interval;
  std::string log_level = "info", log_format = "text";
  std::string metrics_listen, health_listen;
};

// Declares the flags on `cmd` (the `worker` subcommand), bound to `f`.
void AddWorkerFlags(CLI::App* cmd, WorkerFlags& f);
// The options they give, checked as Worker::Create checks them; errors
// name the flag (`--lease: invalid duration ...`).
Result<WorkerOptions> BuildWorkerOptions(const WorkerFlags& f);

}  // namespace warden::cli
