// SimWorker: the heartbeat, the watchdog (self-fencing) and the sweeper
// (runtime/worker_loops.cc, maintenance/sweeper.cc).
#include <algorithm>
#include <map>

#include "core/lease.h"
#include "core/silence.h"
#include "maintenance/sweeper.h"
#include "sim_worker.h"

namespace warden::sim {

// --- Heartbeat ---

void SimWorker::HeartbeatStep() {
  if (threads_done_) return;
  // Only jobs this worker knew it held before the heartbeat are judged by
  // its reply.
  auto known = std::make_shared<std::map<JobId, int64_t>>();
  auto at_start = std::make_shared<HeartbeatStart>();
  for (const auto& [id, r] : running_) {
    (*known)[id] = r->job.lease_token;
    at_start->known.insert(id);
  }
  CollectUnsettled(at_start->known);
  if (claim_in_flight_) at_start->claim_sent_mono = claim_sent_mono_;
  const int64_t start = MonoMs();
  const WorkerId id = id_;
  w_.Call<HeartbeatReply>(
      *this, "heartbeat",
      [id](MemStore& s, TimeMs now) -> Result<HeartbeatReply> {
        return s.WorkerHeartbeat(id, now);
      },
      [this, known, at_start, start](Result<HeartbeatReply> hb) {
        if (!hb.has_value()) {
          return SleepMono(std::max(Millis(50), t_.heartbeat / 4), [this] { HeartbeatStep(); });
        }
        if (!hb->alive) {
          // Declared dead meanwhile: stop everything, register afresh.
          w_.trace().Line(w_.now(),
                          "{}: heartbeat says worker {} was declared dead; stopping "
                          "its jobs, registering again",
                          info_.name, id_);
          StopAll(Stop::kFence);
          return Register([this](bool ok) {
            if (!ok) return SleepMono(t_.heartbeat, [this] { HeartbeatStep(); });
            HeartbeatStep();
          });
        }
        std::map<JobId, int64_t> held;
        for (const JobRef& ref : hb->held) held[ref.id] = ref.lease_token;
        for (JobId cancelled : hb->cancel) {
          auto it = running_.find(cancelled);
          if (it != running_.end()) RequestStop(it->second, Stop::kCancel);
        }
        for (auto& [jid, r] : running_) {
          // Confirmed: the store extended its lease no earlier than `start`.
          auto h = held.find(jid);
          const bool listed = h != held.end() && h->second == r->job.lease_token;
          if (listed && r->worker == id_) r->confirmed_mono = std::max(r->confirmed_mono, start);
          // A job we run that the store no longer gives us was taken over.
          auto k = known->find(jid);
          if (k == known->end() || k->second != r->job.lease_token) continue;
          if (r->stop != Stop::kNone || r->finished) continue;
          if (!listed) {
            w_.trace().Line(w_.now(), "{}: job {} was taken from this worker; stopping it",
                            info_.name, jid);
            RequestStop(r, Stop::kFence);
          }
        }
        ReleaseLostClaims(*at_start, held);
        HeartbeatSleep(start);
      });
}

// Jobs the reply lists whose claim's reply never came (core/lost_claims.h)
// are handed back unrun.
void SimWorker::ReleaseLostClaims(const HeartbeatStart& at_start,
                                  const std::map<JobId, int64_t>& held) {
  const std::unordered_map<JobId, int64_t> listed(held.begin(), held.end());
  for (JobId jid : lost_claims_.Judge(at_start, listed, MonoMs())) {
    const int64_t token = held.at(jid);
    if (delivered_.count({jid, token}) && !dropped_.count({jid, token})) {
      return w_.Fail(fmt::format(
          "false lost claim: {} hands back job {} (token {}) as never delivered, but its claim's "
          "reply did deliver it",
          info_.name, jid, token));
    }
    w_.trace().Line(w_.now(), "{}: job {} (token {}) is held but its claim's reply never came; "
                    "handing it back unrun", info_.name, jid, token);
    JobOutcome o;
    o.ref = JobRef{jid, token};
    o.success = false;
    o.error.kind = ErrorKind::kLost;
    CompleterAdd(std::move(o), t_.lease, /*keyed=*/true);
  }
}

// SleepUntilNextHeartbeat: until `start` + the interval for the shortest
// lease held, recomputed whenever it wakes.
void SimWorker::HeartbeatSleep(int64_t start) {
  heartbeat_sleeping_ = false;
  Millis interval = t_.heartbeat;
  for (const auto& [jid, r] : running_) interval = HeartbeatFor(r->lease, interval);
  const int64_t left = start + interval.count() - MonoMs();
  if (left <= 0) return HeartbeatStep();
  heartbeat_sleeping_ = true;
  heartbeat_start_ms_ = start;
  const uint64_t gen = ++heartbeat_gen_;
  SleepMono(Millis(left), [this, gen, start] {
    if (gen == heartbeat_gen_) HeartbeatSleep(start);
  });
}

// heartbeat_cv_.notify_all(): a job with a shorter lease came in.
void SimWorker::HeartbeatWake() {
  if (!heartbeat_sleeping_) return;
  const uint64_t gen = ++heartbeat_gen_;
  Soon([this, gen] {
    if (gen == heartbeat_gen_) HeartbeatSleep(heartbeat_start_ms_);
  });
}

// --- Watchdog: ticks every 50 ms while there is something to watch ---

void SimWorker::WatchdogArm() {
  if (watchdog_armed_ || running_.empty() || threads_done_) return;
  watchdog_armed_ = true;
  constexpr int64_t kTick = 50 * kUsPerMs;
  const int64_t since = MonoUs() - watchdog_origin_us_;
  TimerAt(watchdog_origin_us_ + (since / kTick + 1) * kTick, [this] { WatchdogTick(); });
}

void SimWorker::WatchdogTick() {
  watchdog_armed_ = false;
  if (threads_done_) return;
  const int64_t now = MonoMs();
  for (auto& [id, r] : running_) {
    const int64_t base = r->lease_base_mono();
    if (r->stop == Stop::kNone && !r->finished && ShouldFence(now, base, r->lease)) {
      w_.trace().Line(w_.now(), "{}: no heartbeat for {}ms (lease {}ms): self-fences job {}",
                      info_.name, now - base, r->lease.count(), id);
      RequestStop(r, Stop::kFence);
      w_.CountSelfFence(*this, id, r->lease);
    }
  }
  WatchdogArm();
}

// --- Sweeper: Maintainer::Pass, one store call at a time ---

// A failed pass keeps every sighting (no EndPass), as Maintainer::Pass does.
void SimWorker::SweepFailed() {
  SleepMono(t_.sweep, [this] { SweepStep(); });
}

// A row first seen in a read was there when the read reached the store,
// not before: it is stamped when the reply is in, as Maintainer::Pass does.
// (Each verdict is carried out by a later statement, conditional on the row
// still being as seen, so judging at the reply is not early either.)
void SimWorker::StampSightings() {
  if (w_.options().mutation != Mutation::kPassStartSightings) judge_.BeginPass(MonoMs());
}

void SimWorker::SweepStep() {
  if (threads_done_) return;
  judge_.BeginPass(MonoMs());
  w_.Call<std::vector<WorkerLiveness>>(
      *this, "list live",
      [](MemStore& s, TimeMs) -> Result<std::vector<WorkerLiveness>> {
        return s.WorkerListLive("");
      },
      [this](Result<std::vector<WorkerLiveness>> live) {
        if (!live.has_value()) return SweepFailed();
        // DeathWatch::Set: pidfds of the other workers on this host, in
        // this pid namespace.
        watched_.clear();
        for (const WorkerLiveness& l : *live) {
          if (l.node != std::to_string(info_.node) || l.pid == process_ ||
              l.pid_ns != std::to_string(info_.pid_ns)) {
            continue;
          }
          watched_.insert(l.pid);
          if (w_.ProcessGone(l.pid)) already_gone_ = true;
        }
        pass_live_ = std::move(live).value();
        StampSightings();
        SweepProofs(pass_live_);
      });
}

// DeclareProvenDead: the process gone on this host, or (PostgreSQL) the
// session lock lost and still lost 250 ms later without a new lock.
void SimWorker::SweepProofs(std::vector<WorkerLiveness> live) {
  std::vector<WorkerId> proven;
  std::vector<WorkerLiveness> suspects;
  for (const WorkerLiveness& l : live) {
    const bool gone = l.node == std::to_string(info_.node) &&
                      l.pid_ns == std::to_string(info_.pid_ns) && l.pid != process_ &&
                      w_.ProcessGone(l.pid);
    if (gone) {
      proven.push_back(l.id);
    } else if (l.session_lost) {
      suspects.push_back(l);
    }
  }
  SweepDeclare(std::move(proven), 0, [this, suspects](bool ok) {
    if (!ok) return SweepFailed();
    if (suspects.empty()) return SweepLeader();
    SleepMono(Millis(250), [this, suspects] {
      w_.Call<std::vector<WorkerLiveness>>(
          *this, "list live",
          [](MemStore& s, TimeMs) -> Result<std::vector<WorkerLiveness>> {
            return s.WorkerListLive("");
          },
          [this, suspects](Result<std::vector<WorkerLiveness>> again) {
            if (!again.has_value()) return SweepFailed();
            std::vector<WorkerId> lost;
            for (const WorkerLiveness& l : *again) {
              if (!l.session_lost) continue;
              for (const WorkerLiveness& s : suspects) {
                if (s.id == l.id && s.session_epoch == l.session_epoch) lost.push_back(l.id);
              }
            }
            SweepDeclare(std::move(lost), 0, [this](bool ok) {
              if (!ok) return SweepFailed();
              SweepLeader();
            });
          });
    });
  });
}

void SimWorker::SweepDeclare(std::vector<WorkerId> ids, size_t i, std::function<void(bool)> then) {
  if (i == ids.size()) return then(true);
  const WorkerId id = ids[i];
  w_.trace().Line(w_.now(), "{}: proves worker {} dead", info_.name, id);
  w_.Call<RescueReport>(
      *this, "declare dead",
      [id](MemStore& s, TimeMs now) -> Result<RescueReport> {
        return s.WorkerDeclareDead(id, "proven dead", now);
      },
      [this, ids = std::move(ids), i, then = std::move(then)](Result<RescueReport> r) mutable {
        // Busy: the next sweep tries again; the rest of this pass goes on.
        if (!r.has_value() && !r.error().transient()) return then(false);
        if (r.has_value()) {
          w_.NotifyWorkers();
          WakeClaimLoop();
        }
        SweepDeclare(std::move(ids), i + 1, std::move(then));
      });
}

// Every worker watches every live heartbeat each pass, then Maintainer::Lead:
// a follower reads the leader row and takes over once it has seen it
// unchanged for the holder's own ttl (or the holder is gone); the leader
// renews every third of its ttl.
void SimWorker::SweepLeader() {
  (void)SilentWorkers(judge_, pass_live_, t_.keepalive);  // watched
  const int64_t start = MonoMs();
  if (leader_ && start < renew_at_ms_) return SweepLed(start, true);
  const Millis ttl = LeaderTtl(t_);
  const WorkerId id = id_;
  auto acquire = [this, start, ttl, id](std::optional<LeaderRow> silent) {
    w_.Call<bool>(
        *this, "leader",
        [id, ttl, silent](MemStore& s, TimeMs now) -> Result<bool> {
          return s.LeaderTryAcquire(id, ttl, silent, now);
        },
        [this, start](Result<bool> acquired) {
          if (!acquired.has_value()) return SweepFailed();
          SweepLed(start, *acquired);
        });
  };
  if (leader_) return acquire(std::nullopt);
  w_.Call<std::optional<LeaderRow>>(
      *this, "leader read",
      [](MemStore& s, TimeMs) -> Result<std::optional<LeaderRow>> { return s.LeaderRead(); },
      [this, start, ttl, id, acquire](Result<std::optional<LeaderRow>> row) {
        if (!row.has_value()) return SweepFailed();
        StampSightings();
        const std::optional<LeaderRow>& r = *row;
        std::optional<LeaderRow> silent;
        bool possible = !r || r->holder == id || !r->holder_live;
        if (!possible) {
          const Millis holder_ttl = r->ttl.count() > 0 ? r->ttl : ttl;
          if (judge_.Unchanged(Renewable::kLeader, 0, r->expires_at, r->holder) >= holder_ttl) {
            silent = r;
            possible = true;
          }
        }
        if (!possible) return SweepLed(start, false);
        acquire(silent);
      });
}

void SimWorker::SweepLed(int64_t start, bool acquired) {
  if (acquired) renew_at_ms_ = start + LeaderTtl(t_).count() / 3;
  if (acquired != leader_) {
    w_.trace().Line(w_.now(), "{}: {} the maintenance leader", info_.name,
                    acquired ? "now" : "no longer");
  }
  leader_ = acquired;
  if (leader_) return SweepMaintain();
  SweepDone();
}

// SweepOnce without the proofs: silent workers (as watched this pass) and
// silent leases (JobLeases, judged by LeaseUnchanged) first, then the
// verdicts, start deadlines, promotions; each one statement. A verdict on
// nobody is no statement (the real stores return before touching the
// database).
void SimWorker::SweepMaintain() {
  auto silent_workers = std::make_shared<std::vector<WorkerLiveness>>(
      SilentWorkers(judge_, pass_live_, t_.keepalive));
  w_.Call<std::vector<LeaseRow>>(
      *this, "leases",
      [](MemStore& s, TimeMs) -> Result<std::vector<LeaseRow>> { return s.JobLeases(); },
      [this, silent_workers](Result<std::vector<LeaseRow>> leases) {
        if (!leases.has_value()) return SweepFailed();
        StampSightings();
        auto silent = std::make_shared<std::vector<LeaseRow>>();
        for (const LeaseRow& l : *leases) {
          const Millis unchanged = LeaseUnchanged(judge_, l.ref.id, l.ref.lease_token,
                                                  l.expires_at, l.length, l.worker,
                                                  l.worker_heartbeat);
          if (unchanged < l.length) continue;
          w_.trace().Line(w_.now(), "{}: job {}'s lease (token {}) silent: unchanged for {}ms",
                          info_.name, l.ref.id, l.ref.lease_token, unchanged.count());
          silent->push_back(l);
        }
        SweepMarkSilent(*silent_workers, [this, silent] { SweepRescue(*silent); });
      });
}

void SimWorker::SweepMarkSilent(const std::vector<WorkerLiveness>& silent,
                                std::function<void()> then) {
  const bool by_wall_clock = w_.options().mutation == Mutation::kPresumeByWallClock;
  if (silent.empty() && !by_wall_clock) return then();
  const Millis keepalive = t_.keepalive;
  w_.Call<int>(
      *this, "mark silent",
      [silent, by_wall_clock, keepalive](MemStore& s, TimeMs now) -> Result<int> {
        if (!by_wall_clock) return s.WorkerMarkSilent(silent, now);
        // The old rule: a heartbeat older than the keepalive by the store's clock.
        std::vector<WorkerLiveness> stale;
        for (const WorkerLiveness& l : s.WorkerListLive("")) {
          if (l.last_heartbeat < now - keepalive.count()) stale.push_back(l);
        }
        return s.WorkerMarkSilent(stale, now);
      },
      [this, then = std::move(then)](Result<int> marked) {
        if (!marked.has_value()) return SweepFailed();
        then();
      });
}

void SimWorker::SweepRescue(const std::vector<LeaseRow>& silent) {
  const bool by_wall_clock = w_.options().mutation == Mutation::kRescueByWallClock;
  if (silent.empty() && !by_wall_clock) return SweepExpire(0);
  w_.Call<RescueReport>(
      *this, "rescue silent",
      [silent, by_wall_clock](MemStore& s, TimeMs now) -> Result<RescueReport> {
        if (!by_wall_clock) return s.JobRescueSilent(silent, now);
        // The old rule: a lease that ran out by the store's clock.
        std::vector<LeaseRow> expired;
        for (const LeaseRow& l : s.JobLeases()) {
          if (l.expires_at < now) expired.push_back(l);
        }
        return s.JobRescueSilent(expired, now);
      },
      [this](Result<RescueReport> rescued) {
        if (!rescued.has_value()) return SweepFailed();
        SweepExpire(rescued->rescued);
      });
}

void SimWorker::SweepExpire(int rescued) {
  w_.Call<int>(
      *this, "expire", [](MemStore& s, TimeMs now) -> Result<int> { return s.JobExpire(now); },
      [this, rescued](Result<int> expired) {
        if (!expired.has_value()) return SweepFailed();
        w_.Call<int>(
            *this, "promote",
            [](MemStore& s, TimeMs now) -> Result<int> { return s.JobPromote(now); },
            [this, rescued](Result<int> promoted) {
              if (!promoted.has_value()) return SweepFailed();
              if (rescued > 0 || *promoted > 0) {
                w_.NotifyWorkers();
                WakeClaimLoop();
              }
              SweepDone();
            });
      });
}

void SimWorker::SweepDone() {
  judge_.EndPass();
  SweepWait();
}

// DeathWatch::Wait: a sweep interval, or less when a watched process exits.
void SimWorker::SweepWait() {
  if (already_gone_) {
    already_gone_ = false;
    return SleepMono(Millis(5), [this] { SweepStep(); });
  }
  sweep_waiting_ = true;
  const uint64_t gen = ++sweep_gen_;
  SleepMono(t_.sweep, [this, gen] {
    if (gen != sweep_gen_) return;
    sweep_waiting_ = false;
    SweepStep();
  });
}

void SimWorker::WatchedProcessDied(int process) {
  if (!watched_.count(process)) return;
  if (!sweep_waiting_) {
    already_gone_ = true;  // its pidfd stays readable: the next wait ends at once
    return;
  }
  sweep_waiting_ = false;
  ++sweep_gen_;
  SleepMono(Millis(5), [this] { SweepStep(); });  // let it finish closing its files
}

}  // namespace warden::sim
