// World: starting worker processes, faults, operator actions and enqueues.
#include <algorithm>

#include "sim_worker.h"
#include "sim_world.h"

namespace warden::sim {

void World::StartProcess(int plan) {
  const int index = static_cast<int>(procs_.size());
  procs_.push_back(std::make_unique<SimWorker>(*this, index, plan, sc_.workers[plan]));
  current_[plan] = index;
  trace_.Line(now_, "{}: process {} starts", sc_.workers[plan].name, index);
  procs_.back()->Start();
}

void World::EnqueueJob(int plan) {
  const JobId id = store_.JobInsert(sc_.jobs[plan].spec, StoreNow());
  lease_written_.resize(id, 0);
  claimed_at_.resize(id, 0);
  lease_by_claim_.resize(id, 0);
  store_changed_ = true;
  job_of_plan_[plan] = id;
  plan_of_job_.push_back(plan);
  ++enqueued_;
  checker_.JobAdded();
  trace_.Line(now_, "client: enqueued job {} (job#{})", id, plan);
  NotifyWorkers();
}

void World::ApplyOperator(const OperatorPlan& op) {
  const JobId id = job_of_plan_[op.job];
  if (id == 0) return;  // not enqueued yet
  store_changed_ = true;
  if (op.kind == OperatorKind::kCancel) {
    auto r = store_.JobCancel(id, StoreNow());
    trace_.Line(now_, "operator: cancel job {}: {}", id,
                r.has_value() ? JobStateName(*r) : r.error().ToString());
    return;
  }
  Status s = store_.JobRetry(id, StoreNow());
  trace_.Line(now_, "operator: retry job {}: {}", id, s.ok() ? "ok" : s.ToString());
  if (s.ok()) {
    checker_.OperatorRetried(id);
    NotifyWorkers();
  }
}

void World::KillProcess(SimWorker& w, bool session_lost_at_once, const char* why) {
  trace_.Line(now_, "{}: process {} {}", w.info().name, w.process(), why);
  w.Kill();
  if (sc_.backend == Backend::kPostgres && w.registered()) {
    const WorkerId id = w.id();
    // Its connection closes: the server releases its session lock at once,
    // or, for a host that vanished, once TCP keepalive gives up.
    if (session_lost_at_once) {
      Post(now_ + FromMs(1), kWorldOwner, [this, id] { store_.SessionLost(id); });
    } else {
      DropSessionWhenSilent(w, now_, -1);
    }
  }
  // pidfds on its host become readable.
  for (const auto& p : procs_) {
    if (p.get() == &w || !p->alive() || p->info().node != w.info().node) continue;
    SimWorker* q = p.get();
    const int dead = w.process();
    Post(now_ + rng_.Range(0, FromMs(1)), q->process(), [q, dead] { q->WatchedProcessDied(dead); });
  }
}

void World::DropSessionWhenSilent(SimWorker& w, SimUs since, SimUs until) {
  if (!w.registered()) return;
  const SimUs drop =
      since + FromMs(SessionDropAfter(sc_.t, session_lease_[static_cast<size_t>(w.process())]).count());
  if (until >= 0 && drop >= until) return;  // heard from again in time
  SimWorker* wp = &w;
  const WorkerId id = w.id();
  Post(std::max(now_, drop), kWorldOwner, [this, wp, id, since, until, drop] {
    // A longer keepalive (a SET sent before the silence) landed meanwhile.
    const SimUs now_due =
        since + FromMs(SessionDropAfter(sc_.t, session_lease_[static_cast<size_t>(wp->process())])
                           .count());
    if (now_due > drop) return DropSessionWhenSilent(*wp, since, until);
    if (until < 0) return store_.SessionLost(id);
    if (!wp->alive() || !wp->registered()) return;
    store_.SessionLost(wp->id());
    Post(until + FromMs(50), kWorldOwner, [this, wp] {
      if (wp->alive() && wp->registered()) store_.SessionRelocked(wp->id());
    });
  });
}

// A supervisor (systemd) starts the worker again once its old process is gone.
void World::RestartWhenGone(int plan, int index) {
  if (current_[plan] != index) return;
  if (procs_[index]->alive()) {
    Post(now_ + FromMs(100), kWorldOwner, [this, plan, index] { RestartWhenGone(plan, index); });
    return;
  }
  StartProcess(plan);
}

void World::Freeze(SimWorker& w, SimUs duration, bool with_jobs, const char* what) {
  // Recovery bound (invariant 5): lease + 2 sweep intervals + margin.
  const SimUs by_lease = checker_.RecoveryAfterLease();
  checker_.ExpectRecovery(w, by_lease, -1, now_ + duration, what);
  w.Freeze(with_jobs);
  SimWorker* wp = &w;
  Post(now_ + duration, kWorldOwner, [this, wp] {
    if (!wp->alive()) return;
    trace_.Line(now_, "{}: thaws", wp->info().name);
    wp->Thaw();
    std::vector<Event> deferred = std::move(wp->deferred());
    wp->deferred().clear();
    for (Event& e : deferred) Post(now_, e.owner, std::move(e.fn));
  });
}

void World::Spawned(SimWorker& w) {
  const FaultPlan* f = pause_at_spawn_[w.plan()];
  if (f == nullptr || w.frozen()) return;
  pause_at_spawn_[w.plan()] = nullptr;
  trace_.Line(now_, "FAULT {} on {} (process {}, worker {}) at its job spawn, for {}ms",
              FaultName(f->kind), w.info().name, w.process(), w.id(), f->duration / kUsPerMs);
  Freeze(w, f->duration, /*with_jobs=*/f->kind != FaultKind::kWorkerPause, FaultName(f->kind));
}

void World::ApplyFault(const FaultPlan& f) {
  if (f.at_spawn) {
    trace_.Line(now_, "fault {} on {}: armed for its next job spawn", FaultName(f.kind),
                sc_.workers[f.worker].name);
    pause_at_spawn_[f.worker] = &f;
    return;
  }
  const int index = current_[f.worker];
  if (index < 0 || !procs_[index]->alive() || procs_[index]->frozen()) {
    trace_.Line(now_, "fault {} on {}: nothing to hit", FaultName(f.kind),
                sc_.workers[f.worker].name);
    return;
  }
  SimWorker& w = *procs_[index];
  SimWorker* wp = &w;
  const Timings& t = sc_.t;
  trace_.Line(now_, "FAULT {} on {} (process {}, worker {}) for {}ms", FaultName(f.kind),
              w.info().name, w.process(), w.id(), f.duration / kUsPerMs);
  // Recovery bounds (invariant 5): provable deaths within a sweep interval,
  // the rest within lease + 2 sweep intervals (plus a margin for the network).
  const SimUs by_proof = now_ + FromMs(t.sweep.count()) + checker_.Margin();
  const SimUs by_lease = checker_.RecoveryAfterLease();  // + the job's lease
  auto restart_later = [this, plan = f.worker, index](SimUs after) {
    Post(now_ + after, kWorldOwner, [this, plan, index] { RestartWhenGone(plan, index); });
  };

  switch (f.kind) {
    case FaultKind::kPause:
    case FaultKind::kSuspend:
      Freeze(w, f.duration, /*with_jobs=*/true, FaultName(f.kind));
      break;
    case FaultKind::kWorkerPause:
      Freeze(w, f.duration, /*with_jobs=*/false, FaultName(f.kind));
      break;
    case FaultKind::kKill: {
      // SQLite: proven by a worker on this host in the same pid namespace;
      // PostgreSQL: by its session lock, gone at once, unless its host was
      // cut off (then no FIN reaches the server: lease + keepalive).
      // A worker already presumed dead (stale heartbeat) is not listed as
      // live, so nobody proves its death: its leases free its jobs.
      const bool cut_off = CutOff(w);
      const MemWorker* row = store_.worker(w.id());
      const bool live =
          row && (row->state == WorkerState::kActive || row->state == WorkerState::kDraining);
      bool provable = sc_.backend == Backend::kPostgres && !cut_off && live;
      for (const WorkerPlan& other : sc_.workers) {
        if (live && other.name != w.info().name && other.node == w.info().node &&
            other.pid_ns == w.info().pid_ns) {
          provable = true;
        }
      }
      checker_.ExpectRecovery(w, by_lease, provable ? by_proof : -1, -1, FaultName(f.kind));
      KillProcess(w, /*session_lost_at_once=*/!cut_off, "killed (SIGKILL)");
      if (f.restart_after) restart_later(*f.restart_after);
      break;
    }
    case FaultKind::kPowerLoss:
      checker_.ExpectRecovery(w, by_lease, -1, -1, FaultName(f.kind));
      KillProcess(w, /*session_lost_at_once=*/false, "lost with its host (power loss)");
      if (f.restart_after) restart_later(*f.restart_after);
      break;
    case FaultKind::kPartition: {
      // One cut from the start of the first overlapping partition to the
      // end of the last (each of them schedules the same loss and relock).
      std::pair<SimUs, SimUs> cut;
      InWindow(partitions_[f.worker], now_, &cut);
      const SimUs end = cut.second;
      checker_.ExpectRecovery(w, by_lease, -1, end, FaultName(f.kind));
      if (sc_.backend == Backend::kPostgres) DropSessionWhenSilent(w, cut.first, end);
      break;
    }
    case FaultKind::kFlaky:
      break;  // the network consults its windows
    case FaultKind::kDrain:
      w.Terminate();
      if (f.restart_after) restart_later(*f.restart_after);
      break;
    case FaultKind::kSessionCut: {
      const WorkerId id = w.id();
      store_.SessionLost(id);
      Post(now_ + f.duration, kWorldOwner, [this, wp, id] {
        if (wp->alive() && wp->id() == id) store_.SessionRelocked(id);
      });
      break;
    }
  }
}

}  // namespace warden::sim
