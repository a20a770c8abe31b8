#include "maintenance/sweeper.h"

#include "env/process.h"

namespace warden {

std::string ProofOfDeath(const WorkerLiveness& w, const std::string& node,
                         const std::string& boot_id) {
  if (w.node != node) return {};
  if (!w.boot_id.empty() && !boot_id.empty() && w.boot_id != boot_id) {
    return "host " + node + " rebooted since it started";
  }
  if (!ProcessAlive(w.pid, w.pid_start)) {
    return "process " + std::to_string(w.pid) + " on " + node + " is gone";
  }
  return {};
}

Result<SweepReport> DeclareProvenDead(Store& store, const std::vector<WorkerLiveness>& live) {
  static const std::string node = HostName();
  static const std::string boot = BootId();
  SweepReport report;
  for (const WorkerLiveness& w : live) {
    const std::string proof = ProofOfDeath(w, node, boot);
    if (proof.empty()) continue;
    WARDEN_ASSIGN_OR_RETURN(RescueReport r, store.WorkerDeclareDead(w.id, proof));
    ++report.proven_dead;
    report.rescued += r.rescued;
  }
  return report;
}

Result<SweepReport> SweepOnce(Store& store, const SweepOptions& options) {
  SweepReport report;
  if (options.prove_deaths) {
    WARDEN_ASSIGN_OR_RETURN(auto live, store.WorkerListLive(""));
    WARDEN_ASSIGN_OR_RETURN(report, DeclareProvenDead(store, live));
  }
  WARDEN_ASSIGN_OR_RETURN(report.presumed_dead, store.WorkerMarkStale(options.keepalive_threshold));
  WARDEN_ASSIGN_OR_RETURN(RescueReport rescued, store.JobRescueExpired());
  report.rescued += rescued.rescued;
  WARDEN_ASSIGN_OR_RETURN(report.expired, store.JobExpire());
  WARDEN_ASSIGN_OR_RETURN(report.promoted, store.JobPromote());
  if (options.prune) {
    WARDEN_ASSIGN_OR_RETURN(report.pruned, store.Prune(options.retention));
  }
  return report;
}

}  // namespace warden
