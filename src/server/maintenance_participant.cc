#include "server/maintenance_participant.h"

#include <unistd.h>

#include <climits>

namespace warden::server {

namespace {

std::string DefaultName() {
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') {
    return "serve-" + std::to_string(getpid());
  }
  return "serve-" + std::string(host) + "-" + std::to_string(getpid());
}

}  // namespace

Result<std::unique_ptr<MaintenanceParticipant>> MaintenanceParticipant::Start(
    const std::string& db, const std::string& name, Log log) {
  WorkerOptions o;
  o.maintenance_only = true;
  o.name = name.empty() ? DefaultName() : name;
  // Each line at the worker's own level: a store out of reach or a lost
  // leadership is trouble (warn), a sweep's recovery is routine (info). The
  // text format has no level of its own, so trouble says so in the words.
  o.log_record = [log](const LogRecord& r) {
    const char* said = r.level == LogLevel::kError  ? "error: "
                       : r.level == LogLevel::kWarn ? "warning: "
                                                    : "";
    log(r.level, "maintenance: " + std::string(said) + r.message);
  };
  WARDEN_ASSIGN_OR_RETURN(std::unique_ptr<Worker> worker, Worker::Create(db, std::move(o)));
  std::unique_ptr<MaintenanceParticipant> p(
      new MaintenanceParticipant(std::move(worker), std::move(log)));
  p->thread_ = std::thread([raw = p.get()] {
    if (Status s = raw->worker_->Run(); !s.ok()) {
      raw->log_(LogLevel::kWarn,
                "maintenance: warning: this server takes no part in maintenance: " + s.ToString());
    }
  });
  return p;
}

MaintenanceParticipant::MaintenanceParticipant(std::unique_ptr<Worker> worker, Log log)
    : worker_(std::move(worker)), log_(std::move(log)) {}

void MaintenanceParticipant::Stop() {
  if (!thread_.joinable()) return;
  worker_->Stop(/*release_now=*/true);  // it runs no job
  thread_.join();
}

MaintenanceParticipant::~MaintenanceParticipant() { Stop(); }

}  // namespace warden::server
