// `warden serve` takes part in maintenance (issue 35 §2): a worker row that
// claims nothing (WorkerOptions::maintenance_only) heartbeats, proves the
// deaths of processes on this host, sweeps, and may lead maintenance. A
// fleet of one worker whose worker was SIGKILLed then has its jobs back as
// fast as with a second worker, and the dead worker is declared so on every
// surface, not left looking alive until another process comes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "warden/log.h"
#include "warden/status.h"
#include "warden/worker.h"

namespace warden::server {

class MaintenanceParticipant {
 public:
  using Log = std::function<void(LogLevel, const std::string&)>;
  // Registers in the background (a database that is not reachable yet is
  // waited for as a worker waits); `name` empty: "serve-<host>-<pid>".
  static Result<std::unique_ptr<MaintenanceParticipant>> Start(const std::string& db,
                                                               const std::string& name, Log log);
  // Leaves: its row is marked stopped, as a worker's on shutdown.
  void Stop();
  ~MaintenanceParticipant();

 private:
  MaintenanceParticipant(std::unique_ptr<Worker> worker, Log log);
  std::unique_ptr<Worker> worker_;
  Log log_;
  std::thread thread_;
};

}  // namespace warden::server
