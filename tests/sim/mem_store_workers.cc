// MemStore: workers, leader lease, rescue and the other maintenance steps
// (sqlite_store_workers.cc, pg_store_workers.cc).
#include <algorithm>

#include "invariants.h"
#include "mem_store.h"

namespace warden::sim {

const MemWorker* MemStore::worker(WorkerId id) const {
  return id >= 1 && id <= static_cast<WorkerId>(workers_.size()) ? &workers_[id - 1] : nullptr;
}

MemWorker* MemStore::FindWorker(WorkerId id) {
  return id >= 1 && id <= static_cast<WorkerId>(workers_.size()) ? &workers_[id - 1] : nullptr;
}

bool MemStore::Live(WorkerId id) const {
  const MemWorker* w = worker(id);
  return w && (w->state == WorkerState::kActive || w->state == WorkerState::kDraining);
}

Result<WorkerId> MemStore::WorkerRegister(const MemWorker& row, TimeMs now) {
  // The unique index on live names: two live processes with one name are refused.
  for (const MemWorker& w : workers_) {
    if (w.name == row.name && Live(w.id)) {
      return FailedPrecondition("a live worker named '" + row.name + "' is already registered");
    }
  }
  MemWorker w = row;
  w.id = static_cast<WorkerId>(workers_.size()) + 1;
  w.state = WorkerState::kActive;
  w.last_heartbeat = now;
  w.session_lost = false;
  w.session_epoch = 1;
  workers_.push_back(w);
  return w.id;
}

HeartbeatReply MemStore::WorkerHeartbeat(WorkerId id, TimeMs now) {
  HeartbeatReply reply;
  MemWorker* w = FindWorker(id);
  if (!w || !Live(id)) {
    reply.alive = false;  // a dead worker extends nothing
    return reply;
  }
  w->last_heartbeat = now;
  for (MemJob& j : jobs_) {
    if (j.state != JobState::kRunning) continue;
    bool mine = j.worker == id;
    if (!mine && mutation_ == Mutation::kHeartbeatForeign) {
      mine = std::find(j.attempt_workers.begin(), j.attempt_workers.end(), id) !=
             j.attempt_workers.end();
      if (mine) {
        j.lease_expires_at = now + j.active_lease_ms;
        j.extended_by = id;
        observer_->OnLeaseRenewed(j);
      }
      continue;  // extended, but not reported as held
    }
    if (!mine) continue;
    j.lease_expires_at = now + j.active_lease_ms;
    j.extended_by = id;
    observer_->OnLeaseRenewed(j);
    reply.held.push_back(JobRef{j.id, j.lease_token});
    if (j.cancel_requested) reply.cancel.push_back(j.id);
  }
  return reply;
}

void MemStore::WorkerSetDraining(WorkerId id) {
  MemWorker* w = FindWorker(id);
  if (w && w->state == WorkerState::kActive) w->state = WorkerState::kDraining;
}

RescueReport MemStore::RescueWhere(bool (*match)(const MemJob&, int64_t), int64_t arg, TimeMs now,
                                   const char* why) {
  RescueReport report;
  for (MemJob& j : jobs_) {
    if (j.state != JobState::kRunning || !match(j, arg)) continue;
    JobOutcome o;
    o.ref = JobRef{j.id, j.lease_token};
    o.error.kind = ErrorKind::kLost;
    if (Fail(o, now, why)) ++report.rescued;
  }
  return report;
}

namespace {
bool HeldBy(const MemJob& j, int64_t worker) { return j.worker == worker; }
}  // namespace

void MemStore::WorkerStop(WorkerId id, TimeMs now) {
  MemWorker* w = FindWorker(id);
  if (w && Live(id)) {
    w->state = WorkerState::kStopped;
    observer_->OnWorkerGone(*w);
  }
  // Normally the worker released its jobs itself; anything left is lost.
  RescueWhere(HeldBy, id, now, "worker stopped while holding the job");
}

std::vector<WorkerLiveness> MemStore::WorkerListLive(const std::string& name) const {
  std::vector<WorkerLiveness> out;
  for (const MemWorker& w : workers_) {
    if (!Live(w.id) || (!name.empty() && w.name != name)) continue;
    WorkerLiveness l;
    l.id = w.id;
    l.name = w.name;
    l.node = std::to_string(w.node);
    l.pid_ns = std::to_string(w.pid_ns);
    l.pid = w.process;
    l.last_heartbeat = w.last_heartbeat;
    l.session_lost = w.session_lost;
    l.session_epoch = w.session_epoch;
    out.push_back(std::move(l));
  }
  return out;
}

RescueReport MemStore::WorkerDeclareDead(WorkerId id, const std::string& reason, TimeMs now) {
  (void)reason;
  MemWorker* w = FindWorker(id);
  if (w && w->state != WorkerState::kStopped) {
    const bool was_live = Live(id);
    w->state = WorkerState::kDead;
    if (was_live) observer_->OnWorkerGone(*w);
  }
  return RescueWhere(HeldBy, id, now, "worker declared dead");
}

int MemStore::WorkerMarkSilent(std::span<const WorkerLiveness> silent, TimeMs now) {
  (void)now;
  // Presumed dead: marked only; the leases, not the presumption, free the jobs.
  int n = 0;
  for (const WorkerLiveness& seen : silent) {
    MemWorker* w = FindWorker(seen.id);
    if (!w || !Live(w->id) || w->last_heartbeat != seen.last_heartbeat) continue;
    w->state = WorkerState::kDead;
    w->presumed_dead = true;
    observer_->OnWorkerGone(*w);
    ++n;
  }
  return n;
}

void MemStore::SessionLost(WorkerId id) {
  if (MemWorker* w = FindWorker(id)) w->session_lost = true;
}

void MemStore::SessionRelocked(WorkerId id) {
  if (MemWorker* w = FindWorker(id)) {
    w->session_lost = false;
    ++w->session_epoch;
  }
}

std::optional<LeaderRow> MemStore::LeaderRead() const {
  if (!leader_holder_) return std::nullopt;
  return LeaderRow{*leader_holder_, leader_expires_at_, leader_ttl_, Live(*leader_holder_)};
}

bool MemStore::LeaderTryAcquire(WorkerId holder, Millis ttl,
                                const std::optional<LeaderRow>& silent, TimeMs now) {
  const bool possible = !leader_holder_ || *leader_holder_ == holder || !Live(*leader_holder_) ||
                        (silent && silent->holder == *leader_holder_ &&
                         silent->expires_at == leader_expires_at_);
  if (!possible) return false;
  leader_holder_ = holder;
  leader_expires_at_ = now + ttl.count();
  leader_ttl_ = ttl;
  return true;
}

std::vector<LeaseRow> MemStore::JobLeases() const {
  std::vector<LeaseRow> out;
  for (const MemJob& j : jobs_) {
    if (j.state != JobState::kRunning || j.worker == 0 || !j.lease_expires_at) continue;
    LeaseRow l;
    l.ref = JobRef{j.id, j.lease_token};
    l.worker = j.worker;
    l.expires_at = *j.lease_expires_at;
    l.length = Millis(j.active_lease_ms);
    if (const MemWorker* w = worker(j.worker)) l.worker_heartbeat = w->last_heartbeat;
    out.push_back(l);
  }
  return out;
}

RescueReport MemStore::JobRescueSilent(std::span<const LeaseRow> silent, TimeMs now) {
  RescueReport report;
  for (const LeaseRow& l : silent) {
    const MemJob* j = Find(l.ref.id);
    // Renewed or finished since it was judged: not silent.
    if (!j || j->state != JobState::kRunning || j->lease_token != l.ref.lease_token ||
        j->lease_expires_at != l.expires_at) {
      continue;
    }
    JobOutcome o;
    o.ref = l.ref;
    o.error.kind = ErrorKind::kLost;
    if (Fail(o, now, kLeaseSilent)) ++report.rescued;
  }
  return report;
}

int MemStore::JobExpire(TimeMs now) {
  int n = 0;
  for (MemJob& j : jobs_) {
    const bool waiting = j.state == JobState::kScheduled || j.state == JobState::kAvailable ||
                         j.state == JobState::kRetryable;
    if (waiting && j.start_deadline_at && *j.start_deadline_at < now) {
      j.state = JobState::kExpired;
      j.finished_at = now;
      ++n;
    }
  }
  return n;
}

int MemStore::JobPromote(TimeMs now) { return PromoteDue(now); }

}  // namespace warden::sim
