// Worker background loops: heartbeat, watchdog (self-fencing) and sweeper.
#include <set>
#include <unordered_map>

#include "warden/duration.h"
#include "core/lease.h"
#include "warden/plural.h"
#include "core/inventory_trigger.h"
#include "maintenance/death_watch.h"
#include "maintenance/inventory_sync.h"
#include "maintenance/maintainer.h"
#include "maintenance/sweeper.h"
#include "runtime/worker_impl.h"

namespace warden {

void Worker::Impl::HeartbeatLoop() {
  bool reported_error = false;
  while (!threads_done_) {
    // Only jobs this worker knew it held before the heartbeat can be judged
    // by its reply: a claim that began earlier but committed after the
    // heartbeat's transaction (it waited for the write lock) is not in it.
    std::unordered_map<JobId, int64_t> known;
    HeartbeatStart at_start;
    {
      MutexLock lock(mu_);
      for (const auto& [id, r] : running_) {
        known[id] = r->job.lease_token;
        at_start.known.insert(id);
      }
      at_start.claim_sent_mono = claim_sent_mono_;
    }
    // After running_: a slot adds a job's outcome before it forgets the job,
    // so a job that left running_ before the look above is found here, or
    // its outcome was written before the heartbeat reads the store.
    completer_->CollectUnsettled(at_start.known);
    const int64_t start = clock_.MonotonicMs();
    auto hb = heartbeat_store_->WorkerHeartbeat(id_);
    if (!hb.has_value()) {
      if (!reported_error) {
        Log(LogLevel::kWarn, "heartbeat failed, retrying: " + hb.error().ToString());
      }
      reported_error = true;
      SleepFor(std::max(Millis(50), opt_.heartbeat / 4));
      continue;
    }
    if (reported_error) Log(LogLevel::kInfo, "heartbeats work again");
    reported_error = false;
    if (hb->alive) {
      last_heartbeat_ok_mono_ = clock_.MonotonicMs();
      FlushMetrics();
    }
    if (!hb->alive) {
      // Declared dead while we could not heartbeat: our leases are gone or
      // going. Stop everything (late writes are fenced) and start afresh.
      StopAll(StopReason::kFence, "this worker was declared dead; stopping its jobs");
      const WorkerId old = id_;
      if (Status s = Register(); !s.ok()) {
        Log(LogLevel::kWarn, "could not register again: " + s.ToString());
        SleepFor(opt_.heartbeat);
        continue;
      }
      RebaseMetrics();
      Log(LogLevel::kInfo, "registered again as worker " + std::to_string(id_.load()) + " (was " +
           std::to_string(old) + ")");
      continue;
    }
    if (!opt_.maintenance_only) DrainIfNodeClosed(hb->node_takes_work);  // it claims nothing
    std::unordered_map<JobId, int64_t> held;
    for (const JobRef& ref : hb->held) held[ref.id] = ref.lease_token;
    {
      MutexLock lock(mu_);
      for (JobId id : hb->cancel) {
        auto it = running_.find(id);
        if (it != running_.end()) it->second->stop.Request(StopReason::kCancel);
      }
      // A job we run that the store no longer gives us was taken over (its
      // lease expired): stop it. Jobs claimed after this heartbeat began
      // are not judged by it.
      for (auto& [id, r] : running_) {
        auto h = held.find(id);
        if (h != held.end() && h->second == r->job.lease_token && r->worker == id_) {
          r->confirmed_mono = std::max(r->confirmed_mono.load(), start);
        }
        auto k = known.find(id);
        if (k == known.end() || k->second != r->job.lease_token) continue;
        if (r->stop.requested() || r->finished) continue;
        if (h == held.end() || h->second != r->job.lease_token) {
          Log(LogLevel::kWarn,
              "job " + std::to_string(id) + " was taken from this worker; stopping it", id);
          r->stop.Request(StopReason::kFence);
        }
      }
    }
    ReleaseLostClaims(at_start, held, clock_.MonotonicMs());
    SleepUntilNextHeartbeat(start);
  }
}

void Worker::Impl::DrainIfNodeClosed(bool node_takes_work) {
  const int64_t now = clock_.MonotonicMs();
  const std::string node = "node " + (opt_.node.empty() ? env_.Host().node : opt_.node);
  if (node_takes_work) {
    if (node_closed_) {
      Log(LogLevel::kInfo, node + " takes work again: claiming");
      node_closed_ = false;
      WakeClaimLoop();
    }
    return;
  }
  if (!node_closed_) {
    // The store already gives this worker nothing more; its running jobs
    // get the time a graceful shutdown gives them.
    node_closed_ = true;
    node_closed_mono_ = now;
    node_released_ = false;
    const size_t n = Inflight();
    Log(LogLevel::kInfo, node + " takes no work (disabled or removed): claiming nothing; " +
                             (n > 0 ? Plural(static_cast<int64_t>(n), "running job") +
                                          " may finish within " +
                                          FormatDuration(opt_.shutdown_timeout) +
                                          (n == 1 ? ", then is released" : ", then are released")
                                    : std::string("no job running")));
    return;
  }
  if (!node_released_ && now - node_closed_mono_ >= opt_.shutdown_timeout.count()) {
    node_released_ = true;
    StopAll(StopReason::kNodeDrain,
            node + " still takes no work: releasing the jobs still running");
  }
}

void Worker::Impl::ReleaseLostClaims(const HeartbeatStart& at_start,
                                     const std::unordered_map<JobId, int64_t>& held,
                                     int64_t reply_mono) {
  for (JobId id : lost_claims_.Judge(at_start, held, reply_mono)) {
    Log(LogLevel::kWarn, "job " + std::to_string(id) +
         " is held by this worker but its claim's reply never came; handing it back unrun",
        id);
    JobOutcome o;
    o.ref = JobRef{id, held.at(id)};
    o.success = false;
    o.error.kind = ErrorKind::kLost;
    o.error.message = "claimed, but the claim's reply never reached the worker; not run";
    completer_->Add(std::move(o), opt_.lease, /*has_concurrency_key=*/true);
  }
}

void Worker::Impl::SleepUntilNextHeartbeat(int64_t start) {
  UniqueMutexLock lock(mu_);
  while (!threads_done_) {
    Millis interval = opt_.heartbeat;
    for (const auto& [id, r] : running_) interval = HeartbeatFor(r->lease, interval);
    const int64_t left = start + interval.count() - clock_.MonotonicMs();
    if (left <= 0) return;
    heartbeat_cv_.WaitFor(lock, Millis(left));
  }
}

void Worker::Impl::WatchdogLoop() {
  while (!threads_done_) {
    const int64_t now = clock_.MonotonicMs();
    {
      MutexLock lock(mu_);
      for (auto& [id, r] : running_) {
        const int64_t base = r->lease_base_mono();
        if (!r->stop.requested() && !r->finished &&
            ShouldSelfFence(now, base, r->lease, opt_.heartbeat)) {
          // Said before it is done (as the heartbeat's "taken from this
          // worker" is): whoever sees the job's process gone finds the line.
          Log(LogLevel::kWarn, "no heartbeat for " + FormatDuration(Millis(now - base)) +
                                   " (lease " + FormatDuration(r->lease) + "): stopping job " +
                                   std::to_string(id) +
                                   " before its lease can pass to another worker",
              id);
          ++counters_.self_fenced;
          r->stop.Request(StopReason::kFence);
        }
        const int64_t started = r->started_mono;
        if (started && !r->timed_out && Millis(now - started) > r->job.timeout) {
          r->timed_out = true;
        }
      }
    }
    watchdog_turned_mono_ = std::max<int64_t>(clock_.MonotonicMs(), 1);  // the lock was free
    SleepFor(Millis(50));
  }
}

void Worker::Impl::SweeperLoop() {
  DeathWatch watch(env_);
  MaintainerOptions mo;
  mo.sweep_interval = opt_.sweep_interval;
  mo.lease = opt_.lease;
  mo.keepalive_threshold = opt_.keepalive_threshold;
  mo.retention = opt_.retention;
  Maintainer maintainer(*sweep_store_, env_, mo);
  bool reported_error = false;
  while (!threads_done_) {
    const MaintenancePass pass = maintainer.Pass(id_);
    bool freed = false;
    CountRecoveries(pass.proven.recoveries);
    if (pass.swept) CountRecoveries(pass.swept->recoveries);
    if (pass.proven.proven_dead > 0) {
      counters_.rescued += pass.proven.rescued;
      deaths_unseen_by_inventory_ += pass.proven.proven_dead;
      Log(LogLevel::kInfo, "proved " + Plural(pass.proven.proven_dead, "worker") +
                               " dead; recovered " + Plural(pass.proven.rescued, "job"));
      freed = true;
    }
    if (pass.now_leader) {
      leader_ = *pass.now_leader;
      Log(LogLevel::kInfo, *pass.now_leader ? "now the maintenance leader"
                                            : "no longer the maintenance leader");
    }
    if (pass.swept) {
      const SweepSummary& r = *pass.swept;
      counters_.rescued += r.rescued;
      deaths_unseen_by_inventory_ += static_cast<int>(r.presumed_dead + r.proven_dead);
      if (r.presumed_dead || r.rescued || r.expired) {
        Log(LogLevel::kInfo, "sweep: " + Plural(r.presumed_dead, "worker") + " presumed dead, " +
                                 Plural(r.rescued, "job") + " recovered, " +
                                 std::to_string(r.expired) + " expired");
      }
      freed = freed || r.rescued > 0 || r.promoted > 0;
    }
    if (freed) {
      sweep_store_->NotifyWorkers();
      WakeClaimLoop();
    }
    if (!pass.status.ok()) {
      if (!reported_error) {
        Log(LogLevel::kWarn, "maintenance failed, retrying: " + pass.status.ToString());
      }
      reported_error = true;
      SleepFor(opt_.sweep_interval);
      continue;
    }
    reported_error = false;
    watch.Set(pass.live);
    if (watch.Wait(opt_.sweep_interval, stop_fd_)) {
      SleepFor(Millis(5));  // let a dying process finish closing its files
    }
  }
}

void Worker::Impl::InventoryLoop() {
  // A connection of its own: a command and its sync never hold up the
  // maintenance passes, which recover jobs.
  std::unique_ptr<Store> store;
  InventoryTrigger trigger(opt_.inventory_interval);
  const InventoryCommand command{opt_.inventory_command, kInventoryTimeout,
                                 "worker:" + opt_.name};
  bool reported_error = false;
  while (!threads_done_) {
    SleepFor(opt_.sweep_interval);
    if (threads_done_) break;
    Status s = [&]() -> Status {
      if (!store) {
        WARDEN_ASSIGN_OR_RETURN(store, open_store_());
      }
      std::set<std::string> unserved;
      const bool leading = leader_;
      if (leading) {
        WARDEN_ASSIGN_OR_RETURN(unserved, UnservedWork(*store));
      }
      const int deaths = deaths_unseen_by_inventory_.exchange(0);
      const int64_t now = clock_.MonotonicMs();
      const std::optional<std::string> why = trigger.Due(now, leading, deaths, unserved);
      if (!why) return Status::Ok();
      trigger.Ran(now);
      auto synced = RunInventoryCommand(*store, env_, command, inventory_stop_);
      if (!synced.has_value()) {
        if (threads_done_) return Status::Ok();
        Log(LogLevel::kWarn, "inventory (" + *why + "): " + synced.error().message());
        return Status::Ok();
      }
      Log(synced->Changed() ? LogLevel::kInfo : LogLevel::kDebug,
          "inventory (" + *why + "): " + DescribeSync(*synced));
      return Status::Ok();
    }();
    if (!s.ok()) {
      if (!reported_error) Log(LogLevel::kWarn, "inventory: " + s.ToString() + "; retrying");
      reported_error = true;
      if (!s.transient()) store.reset();
      continue;
    }
    reported_error = false;
  }
}

void Worker::Impl::SessionLoop() {
  // Kept in session_ (not a local) so it outlives this thread until the
  // goodbye is written: a session closing first would look like a death.
  std::unique_ptr<WorkerSession>& session = session_;
  WorkerId session_for = 0;
  bool reported_error = false;
  while (!threads_done_) {
    Status status = [&]() -> Status {
      // A worker registered again (declared dead meanwhile) needs a session
      // for its new id: the old lock proves nothing about it.
      if (!session || session_for != id_) {
        session.reset();
        session_for = id_;
        lease_guard_.NewSession();
        WARDEN_ASSIGN_OR_RETURN(session, heartbeat_store_->OpenSession(session_for, opt_.lease));
      }
      // The server must not end the session (a proof of death) while a job
      // of a longer lease than the worker's may still run unfenced.
      Millis longest = opt_.lease;
      {
        MutexLock lock(mu_);
        for (const auto& [id, r] : running_) longest = std::max(longest, r->lease);
      }
      WARDEN_RETURN_IF_ERROR(session->KeepAliveFor(longest));
      pollfd fds[3] = {{stop_fd_, POLLIN, 0}, {longer_lease_fd_, POLLIN, 0},
                       {session->fd(), POLLIN, 0}};
      const bool connected = session->fd() >= 0;
      // Disconnected, or its lock not yet taken again: try again soon (the
      // connection paces its own backoff), well within the others' 250 ms
      // confirmation of a lost lock.
      const bool settled = connected && session->Holds();
      env_.Poll(std::span(fds, connected ? 3 : 2),
                clock_.MonotonicMs() + (settled ? opt_.poll_interval.count() : 20));
      if (threads_done_) return Status::Ok();
      if (fds[1].revents) {
        env_.DrainWakeFd(longer_lease_fd_);
        return Status::Ok();  // applied at the top of the next pass
      }
      WARDEN_ASSIGN_OR_RETURN(bool woken, session->Drain());
      if (woken) WakeClaimLoop();
      lease_guard_.NoteSessionHolds(session->Holds());
      return Status::Ok();
    }();
    if (!status.ok()) {
      if (session && session->LossProvesDeath()) lease_guard_.NoteSessionHolds(false);
      if (!reported_error) {
        Log(LogLevel::kWarn, "worker session failed, reconnecting: " + status.ToString());
      }
      reported_error = true;
      // Briefly: the lock must be back well within the sweepers' 250 ms
      // confirmation; the connection paces its own reconnect backoff.
      SleepFor(Millis(10));
      continue;
    }
    if (reported_error) Log(LogLevel::kInfo, "worker session restored");
    reported_error = false;
  }
}

}  // namespace warden
