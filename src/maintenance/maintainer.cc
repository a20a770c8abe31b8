#include "maintenance/maintainer.h"

#include <algorithm>

namespace warden {

namespace {
constexpr const char* kRole = kMaintenanceRole;
constexpr Millis kPruneEvery{10 * 60 * 1000};
}  // namespace

Maintainer::Maintainer(Store& store, Env& env, const MaintainerOptions& options)
    : store_(store), env_(env), clock_(env.clock()), options_(options) {}

Result<bool> Maintainer::Lead(WorkerId self) {
  const int64_t start = clock_.MonotonicMs();
  if (leader_ && start < renew_at_mono_) return true;
  bool acquired = false;
  if (leader_) {
    WARDEN_ASSIGN_OR_RETURN(acquired,
                            store_.LeaderTryAcquire(kRole, self, leader_ttl(), std::nullopt));
  } else {
    WARDEN_ASSIGN_OR_RETURN(auto row, store_.LeaderRead(kRole));
    judge_.BeginPass(clock_.MonotonicMs());
    std::optional<LeaderRow> silent;
    bool possible = !row || row->holder == self || !row->holder_live;
    if (!possible) {
      // The holder's own ttl: whatever this worker's settings, it waits
      // out what the leader promised itself.
      const Millis ttl = row->ttl.count() > 0 ? row->ttl : leader_ttl();
      if (judge_.Unchanged(Renewable::kLeader, 0, row->expires_at, row->holder) >= ttl) {
        silent = row;
        possible = true;
      }
    }
    if (possible) {
      WARDEN_ASSIGN_OR_RETURN(acquired,
                              store_.LeaderTryAcquire(kRole, self, leader_ttl(), silent));
    }
  }
  if (acquired) renew_at_mono_ = start + leader_ttl().count() / 3;
  return acquired;
}

MaintenancePass Maintainer::Pass(WorkerId self) {
  judge_.BeginPass(clock_.MonotonicMs());
  MaintenancePass pass;
  pass.status = [&]() -> Status {
    WARDEN_ASSIGN_OR_RETURN(pass.live, store_.WorkerListLive(""));
    judge_.BeginPass(clock_.MonotonicMs());
    WARDEN_ASSIGN_OR_RETURN(pass.proven, DeclareProvenDead(store_, env_, pass.live));
    (void)SilentWorkers(judge_, pass.live, options_.keepalive_threshold);  // watched
    WARDEN_ASSIGN_OR_RETURN(bool leading, Lead(self));
    if (leading != leader_) pass.now_leader = leading;
    leader_ = leading;
    if (!leader_) {
      // Watched, not judged: a follower that becomes the leader then knows
      // how long each lease has gone unrenewed, also those a heartbeat does
      // not cover (renewed by a claim after the worker's last heartbeat),
      // so recovery stays within lease + 2 sweeps when leaders change.
      WARDEN_ASSIGN_OR_RETURN(auto leases, store_.JobLeases());
      judge_.BeginPass(clock_.MonotonicMs());
      for (const LeaseRow& l : leases) {
        (void)LeaseUnchanged(judge_, l.ref.id, l.ref.lease_token, l.expires_at, l.length,
                             l.worker, l.worker_heartbeat);
      }
      return Status::Ok();
    }
    SweepOptions o;
    o.keepalive_threshold = options_.keepalive_threshold;
    o.prove_deaths = false;  // done above
    const int64_t now = clock_.MonotonicMs();
    o.prune = !last_prune_mono_ || now - *last_prune_mono_ > kPruneEvery.count();
    o.retention = options_.retention;
    WARDEN_ASSIGN_OR_RETURN(pass.swept, SweepOnce(store_, o, judge_, env_, pass.live));
    if (o.prune) last_prune_mono_ = now;
    return Status::Ok();
  }();
  // A failed pass saw only part of the rows: keeping every sighting (rather
  // than dropping those it did not reach) never makes a verdict early, as
  // each verdict is still "unchanged since first seen".
  if (pass.status.ok()) judge_.EndPass();
  return pass;
}

}  // namespace warden
