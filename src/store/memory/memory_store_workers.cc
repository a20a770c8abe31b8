// MemoryStore: workers, their sessions, and declaring them dead.
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "store/memory/memory_session.h"
#include "store/memory/memory_store.h"
#include "warden/duration.h"
#include "warden/lists.h"

namespace warden::memory {

Result<WorkerId> MemoryStore::WorkerRegister(const WorkerRegistration& r) {
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  const TimeMs now = clock_->NowMs();
  // SQLite's workers_live_name: two live processes with one name are refused.
  for (const auto& [id, w] : t.workers) {
    if (w.name == r.name && IsLive(w.state)) {
      return FailedPrecondition("a live worker named '" + r.name + "' is already registered");
    }
  }
  WorkerRow w;
  w.id = ++t.last_worker_id;
  w.name = r.name;
  w.node = r.node;
  w.host = r.host;
  w.boot_id = r.boot_id;
  w.pid_ns = r.pid_ns;
  w.pid = r.pid;
  w.pid_start = r.pid_start;
  w.version = r.version;
  w.queues = JoinList(r.queues);
  w.tasks = JoinList(r.tasks);
  w.concurrency = r.concurrency;
  w.started_at = now;
  w.last_heartbeat = now;
  w.allow_commands = r.allow_commands;
  w.keepalive = r.keepalive;
  t.workers.emplace(w.id, std::move(w));
  return t.last_worker_id;
}

Result<HeartbeatReply> MemoryStore::WorkerHeartbeat(WorkerId id) {
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  const TimeMs now = clock_->NowMs();
  HeartbeatReply reply;
  auto w = t.workers.find(id);
  if (w == t.workers.end() || !IsLive(w->second.state)) {
    reply.alive = false;  // a dead worker extends nothing
    return reply;
  }
  // The worker row and its leases at one time: expires_at - length is the
  // heartbeat, to the millisecond.
  w->second.last_heartbeat = now;
  for (auto& [job_id, job] : t.jobs) {
    if (job.state != JobState::kRunning || job.worker_id != id) continue;
    job.lease_expires_at = now + job.active_lease_ms.value_or(0);
    reply.held.push_back(JobRef{job.id, job.lease_token});
    if (job.cancel_requested) reply.cancel.push_back(job.id);
  }
  auto node = t.nodes.find(w->second.node);
  reply.node_takes_work = node == t.nodes.end() || node->second.TakesWork();
  return reply;
}

Status MemoryStore::WorkerSetDraining(WorkerId id) {
  MutexLock lock(db_->mu);
  auto w = db_->t.workers.find(id);
  if (w != db_->t.workers.end() && w->second.state == WorkerState::kActive) {
    w->second.state = WorkerState::kDraining;
  }
  return Status::Ok();
}

RescueReport MemoryStore::RescueWorkerLocked(WorkerId worker, const std::string& message,
                                             LossCause cause, TimeMs now) {
  std::vector<JobRef> victims;
  for (const auto& [id, job] : db_->t.jobs) {
    if (job.state == JobState::kRunning && job.worker_id == worker) {
      victims.push_back(JobRef{job.id, job.lease_token});
    }
  }
  RescueReport report;
  for (const JobRef& ref : victims) {
    JobOutcome o;
    o.ref = ref;
    o.error.kind = ErrorKind::kLost;
    o.error.message = message;
    o.lost_by = cause;
    RescuedJob rescued;
    if (FailLocked(o, now, &rescued)) {
      ++report.rescued;
      report.jobs.push_back(std::move(rescued));
    }
  }
  return report;
}

Status MemoryStore::WorkerStop(WorkerId id) {
  MutexLock lock(db_->mu);
  const TimeMs now = clock_->NowMs();
  auto w = db_->t.workers.find(id);
  if (w != db_->t.workers.end() && IsLive(w->second.state)) {
    w->second.state = WorkerState::kStopped;
    w->second.stopped_at = now;
  }
  // Normally the worker released its jobs itself; anything left is lost.
  RescueWorkerLocked(id, "worker stopped while holding the job", LossCause::kWorkerStop, now);
  return Status::Ok();
}

Result<std::vector<WorkerInfo>> MemoryStore::WorkerList(bool live_only) {
  MutexLock lock(db_->mu);
  std::map<WorkerId, int> running;
  for (const auto& [id, job] : db_->t.jobs) {
    if (job.state == JobState::kRunning && job.worker_id) ++running[*job.worker_id];
  }
  std::vector<WorkerInfo> out;
  for (const auto& [id, w] : db_->t.workers) {
    if (live_only && !IsLive(w.state)) continue;
    auto n = running.find(id);
    out.push_back(ToWorkerInfo(w, n == running.end() ? 0 : n->second));
  }
  return out;
}

Result<std::vector<WorkerLiveness>> MemoryStore::WorkerListLive(const std::string& name) {
  MutexLock lock(db_->mu);
  std::vector<WorkerLiveness> out;
  for (const auto& [id, w] : db_->t.workers) {
    if (!IsLive(w.state) || (!name.empty() && w.name != name)) continue;
    out.push_back(WorkerLiveness{w.id, w.name, w.host.empty() ? w.node : w.host, w.boot_id,
                                 w.pid_ns, w.pid, w.pid_start, w.last_heartbeat});
    if (auto l = db_->t.session_locks.find(id); l != db_->t.session_locks.end()) {
      out.back().session_lost = l->second.taken_once && l->second.holder == 0;
      out.back().session_epoch = l->second.epoch;
    }
  }
  return out;
}

Result<RescueReport> MemoryStore::WorkerDeclareDead(WorkerId id, const std::string& reason,
                                                    LossCause cause, const AuditEntry* audit) {
  MutexLock lock(db_->mu);
  const TimeMs now = clock_->NowMs();
  auto w = db_->t.workers.find(id);
  if (w != db_->t.workers.end() && w->second.state != WorkerState::kStopped) {
    w->second.state = WorkerState::kDead;
    w->second.stopped_at = now;
    w->second.death_reason = reason;
  }
  if (audit) {
    // An operator's release: each job it takes from the worker shows who.
    for (auto& [job_id, job] : db_->t.jobs) {
      if (job.state == JobState::kRunning && job.worker_id == id) {
        job.actions.push_back(JobActionOn(job, now, "release", audit->actor, 0, false));
      }
    }
  }
  RescueReport report =
      RescueWorkerLocked(id, "worker " + std::to_string(id) + " is dead: " + reason, cause, now);
  if (audit) {
    AuditEntry entry = *audit;
    entry.count = report.rescued;
    AppendAudit(db_->t, std::move(entry), now);
  }
  return report;
}

Result<int> MemoryStore::WorkerMarkSilent(std::span<const WorkerLiveness> silent,
                                          Millis silent_for) {
  if (silent.empty()) return 0;
  MutexLock lock(db_->mu);
  const TimeMs now = clock_->NowMs();
  int marked = 0;
  for (const WorkerLiveness& seen : silent) {
    auto w = db_->t.workers.find(seen.id);
    if (w == db_->t.workers.end() || !IsLive(w->second.state) ||
        w->second.last_heartbeat != seen.last_heartbeat) {
      continue;  // heartbeat since it was judged, or gone already
    }
    w->second.state = WorkerState::kDead;
    w->second.stopped_at = now;
    w->second.death_reason = "no heartbeat for " + FormatDuration(silent_for);
    ++marked;
  }
  return marked;
}

Result<std::unique_ptr<WorkerSession>> MemoryStore::OpenSession(WorkerId id, Millis lease) {
  (void)lease;  // no server to keep alive: ServerDrops is the simulation's
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) return Unavailable(std::string("eventfd: ") + std::strerror(errno));
  return std::unique_ptr<WorkerSession>(std::make_unique<MemorySession>(db_, id, fd));
}

}  // namespace warden::memory
