#include "maintenance/sweeper.h"

#include <algorithm>
#include <functional>
#include <map>

namespace warden {

std::string ProofOfDeath(const WorkerLiveness& w, Env& env) {
  const HostFacts& self = env.Host();
  if (w.host != self.node) return {};
  if (!w.boot_id.empty() && !self.boot_id.empty() && w.boot_id != self.boot_id) {
    return "host " + self.node + " rebooted since it started";
  }
  if (w.pid_ns != self.pid_ns) return {};
  if (env.ProcessProvablyGone(w.pid, w.pid_start)) {
    return "process " + std::to_string(w.pid) + " on " + self.node + " is gone";
  }
  return {};
}

std::string ProofOfLife(const WorkerLiveness& w, Env& env) {
  const HostFacts& self = env.Host();
  if (w.host != self.node || w.boot_id != self.boot_id || w.pid_ns != self.pid_ns) return {};
  if (self.boot_id.empty() || self.pid_ns.empty()) return {};
  if (!env.ProcessAlive(w.pid, w.pid_start)) return {};
  return "process " + std::to_string(w.pid) + " on " + self.node + " is running";
}

Result<std::vector<WorkerId>> ConfirmSessionsLost(Store& store, const Clock& clock,
                                                  const std::vector<WorkerLiveness>& suspects,
                                                  const std::string& name) {
  std::vector<WorkerId> lost;
  if (suspects.empty()) return lost;
  clock.SleepFor(kSessionLossConfirm);
  WARDEN_ASSIGN_OR_RETURN(auto again, store.WorkerListLive(name));
  for (const WorkerLiveness& w : again) {
    if (!w.session_lost) continue;
    for (const WorkerLiveness& s : suspects) {
      if (s.id == w.id && s.session_epoch == w.session_epoch) lost.push_back(w.id);
    }
  }
  return lost;
}

Result<RescueReport> DeclareDeadPatiently(Store& store, const Clock& clock, WorkerId id,
                                          const std::string& reason, LossCause cause,
                                          const AuditEntry* audit, Millis patience) {
  constexpr Millis kPause{100};
  auto declared = store.WorkerDeclareDead(id, reason, cause, audit);
  for (Millis waited{0}; !declared.has_value() && declared.error().transient() &&
                         waited < patience;
       waited += kPause) {
    clock.SleepFor(kPause);
    declared = store.WorkerDeclareDead(id, reason, cause, audit);
  }
  return declared;
}

namespace {

// Adds a rescue's jobs to `report`, each `took` (by job id) to recover.
void AddRecoveries(SweepSummary& report, const RescueReport& r, const char* cause,
                   const std::function<Millis(JobId)>& took) {
  report.rescued += r.rescued;
  for (const RescuedJob& j : r.jobs) {
    report.recoveries.push_back(Recovery{j.queue, cause, j.next, j.kind, took(j.id)});
  }
}

}  // namespace

Result<SweepSummary> DeclareProvenDead(Store& store, Env& env,
                                       const std::vector<WorkerLiveness>& live) {
  SweepSummary report;
  const int64_t found_mono = env.clock().MonotonicMs();
  auto declare = [&](WorkerId id, const std::string& proof) -> Status {
    auto r = store.WorkerDeclareDead(id, proof, LossCause::kProvenDeath, nullptr);
    // Busy (its row is held by a transaction in flight): the next sweep
    // tries again; the rest of this pass goes on.
    if (!r.has_value()) return r.error().transient() ? Status::Ok() : r.error();
    ++report.proven_dead;
    const Millis took(env.clock().MonotonicMs() - found_mono);
    AddRecoveries(report, *r, "proven_death", [&](JobId) { return took; });
    return Status::Ok();
  };
  std::vector<WorkerLiveness> suspects;
  for (const WorkerLiveness& w : live) {
    const std::string proof = ProofOfDeath(w, env);
    if (!proof.empty()) {
      WARDEN_RETURN_IF_ERROR(declare(w.id, proof));
    } else if (w.session_lost) {
      suspects.push_back(w);
    }
  }
  WARDEN_ASSIGN_OR_RETURN(auto lost, ConfirmSessionsLost(store, env.clock(), suspects, ""));
  for (WorkerId id : lost) WARDEN_RETURN_IF_ERROR(declare(id, kSessionLostProof));
  return report;
}

std::vector<WorkerLiveness> SilentWorkers(SilenceJudge& judge,
                                          const std::vector<WorkerLiveness>& live,
                                          Millis keepalive) {
  std::vector<WorkerLiveness> silent;
  for (const WorkerLiveness& w : live) {
    if (judge.Unchanged(Renewable::kHeartbeat, w.id, w.last_heartbeat) >= keepalive) {
      silent.push_back(w);
    }
  }
  return silent;
}

namespace {

// `unchanged` learns how long each silent lease has gone unrenewed.
std::vector<LeaseRow> SilentLeases(SilenceJudge& judge, const std::vector<LeaseRow>& leases,
                                   std::map<JobId, Millis>& unchanged) {
  std::vector<LeaseRow> silent;
  for (const LeaseRow& l : leases) {
    const Millis quiet = LeaseUnchanged(judge, l.ref.id, l.ref.lease_token, l.expires_at,
                                        l.length, l.worker, l.worker_heartbeat);
    if (quiet >= l.length) {
      silent.push_back(l);
      unchanged[l.ref.id] = quiet;
    }
  }
  return silent;
}

}  // namespace

Result<SweepSummary> SweepOnce(Store& store, const SweepOptions& options, SilenceJudge& judge,
                               Env& env, const std::vector<WorkerLiveness>& live) {
  const Clock& clock = env.clock();
  SweepSummary report;
  if (options.prove_deaths) {
    WARDEN_ASSIGN_OR_RETURN(report, DeclareProvenDead(store, env, live));
  }
  const auto silent_workers = SilentWorkers(judge, live, options.keepalive_threshold);
  WARDEN_ASSIGN_OR_RETURN(auto leases, store.JobLeases());
  const int64_t judged_mono = clock.MonotonicMs();
  judge.BeginPass(judged_mono);
  std::map<JobId, Millis> unchanged;
  const auto silent_leases = SilentLeases(judge, leases, unchanged);
  WARDEN_ASSIGN_OR_RETURN(report.presumed_dead,
                          store.WorkerMarkSilent(silent_workers, options.keepalive_threshold));
  WARDEN_ASSIGN_OR_RETURN(RescueReport rescued, store.JobRescueSilent(silent_leases));
  const Millis since_judged(clock.MonotonicMs() - judged_mono);
  AddRecoveries(report, rescued, "lease_expiry",
                [&](JobId id) { return unchanged[id] + since_judged; });
  WARDEN_ASSIGN_OR_RETURN(report.expired, store.JobExpire());
  WARDEN_ASSIGN_OR_RETURN(report.promoted, store.JobPromote());
  if (options.prune) {
    WARDEN_ASSIGN_OR_RETURN(report.pruned, store.Prune(options.retention));
  }
  // Last, so that it takes in what this pass changed (Store::JobCountsFold:
  // PostgreSQL's readers then add up a pass's worth of deltas at most).
  WARDEN_RETURN_IF_ERROR(store.JobCountsFold());
  return report;
}

}  // namespace warden
