#include "invariants.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim_worker.h"
#include "sim_world.h"

namespace warden::sim {
namespace {

double Sec(SimUs t) { return static_cast<double>(t) / 1e6; }
std::string WhenOrNever(SimUs t) { return t < 0 ? "never" : fmt::format("at {:.3f}s", Sec(t)); }

}  // namespace

SimUs Checker::Margin() const {
  // Several store calls per sweep pass, each way on the network, and on
  // PostgreSQL the 250 ms confirmation of a lost session (twice: the pass
  // under way may be confirming another loss).
  const Scenario& sc = w_.scenario();
  const int64_t confirm = sc.backend == Backend::kPostgres ? 2 * 250 : 0;
  return FromMs(100 + confirm + 20 * sc.t.max_net_delay.count());
}

SimUs Checker::RecoveryAfterLease() const {
  // The leader sees a renewal first at its next pass, and its verdict comes
  // at the first pass after a lease's length of watching (core/silence.h).
  return FromMs(2 * w_.scenario().t.sweep.count()) + Margin();
}

SimUs Checker::KillLatency() const { return FromMs(w_.scenario().t.max_kill_latency.count() + 1); }

SimUs Checker::ThawGrace() const {
  // The watchdog's 50 ms tick (on a clock up to 1% slow) and the kill.
  return FromMs(51 + w_.scenario().t.max_kill_latency.count() + 2);
}

void Checker::JobAdded() {
  completions_.push_back(0);
  amo_starts_.push_back(0);
  orphan_since_.push_back(-1);
  orphan_token_.push_back(0);
}

void Checker::OperatorRetried(JobId job) { amo_starts_[job - 1] = 0; }

void Checker::HandlerStarted(const RunTruth& run) {
  active_.push_back(static_cast<int>(w_.runs().size()) - 1);
  // (6) A process may begin only on a lease the store still gives it, frozen
  // worker or not: no grace for a start.
  const std::string& name = w_.processes()[run.process]->info().name;
  if (run.superseded >= 0) {
    return w_.Fail(fmt::format(
        "(6) job {}: its process started on {} at {:.3f}s with token {}, which the store had "
        "taken from it at {:.3f}s",
        run.job, name, Sec(run.started), run.token, Sec(run.superseded)));
  }
  const MemJob& j = w_.store().job(run.job);
  if (j.lease_expires_at && run.started > w_.LeaseExpiry(j)) {
    return w_.Fail(fmt::format(
        "(6) job {}: its process started on {} at {:.3f}s with token {}, after its lease in "
        "the store ran out ({:.3f}s)",
        run.job, name, Sec(run.started), run.token, Sec(w_.LeaseExpiry(j))));
  }
  if (run.at_most_once && ++amo_starts_[run.job - 1] > 1) {
    w_.Fail(
        fmt::format("(3) at-most-once job {} started a second time without an operator's "
                    "retry (token {} on {})",
                    run.job, run.token, w_.processes()[run.process]->info().name));
  }
}

void Checker::AcceptedWrite(const char* what, JobId job, int64_t named, int64_t current) {
  if (named != current) {
    w_.Fail(
        fmt::format("(2) fencing: a '{}' naming lease token {} was accepted for job {} "
                    "whose current token is {}",
                    what, named, job, current));
  }
  if (std::string_view(what) == "complete" && ++completions_[job - 1] > 1) {
    w_.Fail(fmt::format("(2) job {} has {} committed completions", job, completions_[job - 1]));
  }
}

bool Checker::WasHealthySince(int process, SimUs since) const {
  const size_t i = static_cast<size_t>(process);
  return i < healthy_.size() && healthy_[i] && last_unhealthy_[i] < since;
}

// What clock steps must never do (DESIGN.md, "Time"): get a worker that
// stays healthy, heartbeating, declared dead or its running jobs taken
// (an at-most-once job among them would go to dead). Judged from what the
// checks saw up to the last step: the store has already changed the row.
void Checker::WorkerGone(const MemWorker& row) {
  if (row.state != WorkerState::kDead) return;
  const SimWorker* p = w_.ProcessOfWorkerId(row.id);
  if (!p || !p->alive() || p->id() != row.id) return;
  const Timings& t = w_.scenario().t;
  // Presumed dead: its heartbeat seen unchanged for the keepalive; a
  // healthy worker renews it at least every heartbeat interval.
  const int64_t silent_ms = t.keepalive.count() * 101 / 100 + t.heartbeat.count();
  const SimUs window = row.presumed_dead ? FromMs(silent_ms) + Margin() : Margin();
  if (!WasHealthySince(p->process(), w_.now() - window)) return;
  w_.Fail(fmt::format(
      "(time) worker {} ({}) was {} dead at {:.3f}s though it stayed healthy (heartbeating) "
      "since {:.3f}s; store clock steps: {}",
      row.id, p->info().name, row.presumed_dead ? "presumed" : "declared",
      Sec(w_.now()), Sec(last_unhealthy_[static_cast<size_t>(p->process())]),
      ClockSteps()));
}

void Checker::TakenAway(const MemJob& job, const char* why) {
  if (std::string_view(why) != kLeaseSilent) return;  // its worker's death: WorkerGone
  const SimWorker* p = w_.ProcessOfWorkerId(job.worker);
  if (!p || !p->alive() || p->id() != job.worker) return;
  const Timings& t = w_.scenario().t;
  const SimUs window =
      FromMs(job.active_lease_ms * 101 / 100 + t.heartbeat.count()) + Margin();
  if (!WasHealthySince(p->process(), w_.now() - window)) return;
  const bool amo = job.delivery == Delivery::kAtMostOnce && job.started_mark;
  w_.Fail(fmt::format(
      "(time) job {} (token {}{}) was taken from {} (worker {}) at {:.3f}s for a silent lease, "
      "though that worker stayed healthy (heartbeating) since {:.3f}s; store clock steps: {}",
      job.id, job.lease_token, amo ? ", at-most-once and started: it goes to dead" : "",
      p->info().name, job.worker, Sec(w_.now()),
      Sec(last_unhealthy_[static_cast<size_t>(p->process())]), ClockSteps()));
}

std::string Checker::ClockSteps() const {
  const std::string steps = w_.ClockStepsSoFar();
  return steps.empty() ? "none" : steps;
}

void Checker::SelfFenced(const SimWorker& w, JobId job, Millis lease) {
  const Timings& t = w_.scenario().t;
  if (!HealthyThroughout(w, w_.now() - FromMs(t.lease.count()))) return;
  w_.Fail(fmt::format(
      "(7) {} fenced job {} (lease {}ms) itself though the store answered all its calls for a "
      "whole lease ({}ms; heartbeat {}ms)",
      w.info().name, job, lease.count(), t.lease.count(), t.heartbeat.count()));
}

bool Checker::HealthyThroughout(const SimWorker& p, SimUs since) const {
  const size_t i = static_cast<size_t>(p.process());
  return i < last_unhealthy_.size() && w_.Healthy(p) && last_unhealthy_[i] < since;
}

SimUs Checker::WatchedFrom(const MemJob& j) const {
  const SimUs written = w_.LeaseWritten(j);
  if (!leader_seen_) return written;
  const SimWorker* leader = w_.ProcessOfWorkerId(*leader_seen_);
  if (!leader) return written;
  // A leader that was frozen, cut off or hanging since the renewal first
  // reads it once it is back.
  SimUs from = std::max(written, last_unhealthy_[static_cast<size_t>(leader->process())]);
  // Followers watch the live workers' heartbeats (and so the leases those
  // renew), not the leases themselves: a leader that took over since the
  // lease was written watches from its takeover a lease its claim wrote, or
  // one whose worker was no longer live (not watched since), or any, if its
  // own process (its judge) started after the lease was written.
  const SimUs gone = w_.WorkerGoneAt(j.worker);
  if (leader_taken_at_ > written &&
      (w_.LeaseByClaim(j) || (gone >= 0 && gone <= leader_taken_at_) ||
       leader->started_at() > written)) {
    from = std::max(from, leader_taken_at_);
  }
  return from;
}

bool Checker::HelperThroughout(const SimWorker& dead, SimUs since, bool same_host_only) const {
  for (const auto& p : w_.processes()) {
    if (p.get() == &dead || !HealthyThroughout(*p, since)) continue;
    if (same_host_only &&
        (p->info().node != dead.info().node || p->info().pid_ns != dead.info().pid_ns)) {
      continue;
    }
    return true;
  }
  return false;
}

void Checker::ExpectRecovery(const SimWorker& w, SimUs after_lease, SimUs fixed, SimUs fault_end,
                             const std::string& what) {
  if (!w.registered()) return;
  for (const MemJob& j : w_.store().jobs()) {
    if (j.state != JobState::kRunning || j.worker != w.id()) continue;
    const SimUs due = fixed >= 0 ? fixed : w_.now() + FromMs(j.active_lease_ms) + after_lease;
    deadlines_.push_back(Deadline{j.id, j.lease_token, w.process(), w_.now(), fault_end, due,
                                  fixed >= 0, false, what});
  }
}

void Checker::AfterStep() {
  const SimUs now = w_.now();
  const auto& procs = w_.processes();
  // Health changes only at steps: what it was after the last step lasted
  // until now.
  if (!any_healthy_) last_no_healthy_ = now;
  for (size_t i = 0; i < healthy_.size(); ++i) {
    if (!healthy_[i]) last_unhealthy_[i] = now;
  }
  while (last_unhealthy_.size() < procs.size()) last_unhealthy_.push_back(now);
  healthy_.resize(procs.size());
  any_healthy_ = false;
  for (const auto& p : procs) {
    const bool healthy = w_.Healthy(*p);
    healthy_[p->process()] = healthy;
    if (healthy) {
      any_healthy_ = true;
    } else {
      last_unhealthy_[p->process()] = now;
    }
  }
  if (!any_healthy_) last_no_healthy_ = now;
  if (w_.store().leader() != leader_seen_) {
    leader_seen_ = w_.store().leader();
    leader_taken_at_ = now;
  }
  if (auto holder = w_.store().leader()) {
    const SimWorker* leader = w_.ProcessOfWorkerId(*holder);
    if (leader && !healthy_[leader->process()]) {
      last_leader_unhealthy_ = now;
      leader_unhealthy_.resize(std::max(leader_unhealthy_.size(), procs.size()), -1);
      leader_unhealthy_[leader->process()] = now;
    }
  }
  CheckStore();
  CheckRuns();
  CheckDeadlines();
}

void Checker::CheckStore() {
  const SimUs now = w_.now();
  const Timings& t = w_.scenario().t;
  const auto& jobs = w_.store().jobs();
  // The leader may hang or freeze right after renewing its lease (LeaderTtl:
  // 3 sweep intervals, at most the lease); a follower takes over at its next
  // pass after that. Should
  // the new leader hang or die in turn (it may lose power just after taking
  // over), nobody sweeps until its lease runs out too: counted from the
  // last moment an unhealthy worker held the leader lease, less that lease.
  const SimUs slack = FromMs(5 * t.sweep.count()) + Margin();
  const SimUs leader_back = last_leader_unhealthy_ - FromMs(LeaderTtl(t).count());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const MemJob& j = jobs[i];
    if (j.state != JobState::kRunning) {
      orphan_since_[i] = -1;
      continue;
    }
    if (!j.lease_expires_at || j.worker == 0) {
      return w_.Fail(fmt::format("(1) job {} is running without a lease", j.id));
    }
    if (!j.concurrency_key.empty()) {
      for (size_t k = 0; k < i; ++k) {
        if (jobs[k].state == JobState::kRunning && jobs[k].concurrency_key == j.concurrency_key) {
          return w_.Fail(fmt::format("(4) jobs {} and {} both running with concurrency key '{}'",
                                     jobs[k].id, j.id, j.concurrency_key));
        }
      }
    }
    // A lease silent for its length (watched by the leader since it could,
    // WatchedFrom) is recovered by a pass of the leader; a new leader takes
    // over within the leader lease's ttl.
    const SimUs base = std::max(last_no_healthy_, leader_back);
    SimUs expired = w_.LeaseExpiry(j);  // WatchedFrom is later, if anything
    if (now > std::max(expired, base) + slack) expired = WatchedFrom(j) + FromMs(j.active_lease_ms);
    if (now > std::max(expired, base) + slack) {
      return w_.Fail(fmt::format(
          "(1) stuck: job {}'s lease (token {}, written at {:.3f}s) was silent for its length "
          "by {:.3f}s and nobody recovered it by {:.3f}s though a healthy worker was there since "
          "{:.3f}s (leader lease last held by an unhealthy worker: {})",
          j.id, j.lease_token, Sec(w_.LeaseWritten(j)), Sec(expired), Sec(now),
          Sec(last_no_healthy_), WhenOrNever(last_leader_unhealthy_)));
    }
    // Running in the store on a live worker that does not know it holds it
    // (and no claim it sent before may still tell it): its heartbeats keep
    // the job `running` for ever. (Once its loops have ended at shutdown,
    // only a heartbeat already on its way may still land: the lease then
    // runs out, which the check above covers.)
    SimWorker* p = w_.ProcessOfWorkerId(j.worker);
    const bool orphan = p && p->alive() && !p->threads_done() && !p->Knows(j.id, j.lease_token) &&
                        !p->ClaimInFlightSince(w_.ClaimedAt(j));
    if (orphan) {
      // ReleaseLostClaims hands such a job back at its second sighting,
      // unless the claim in flight was sent before a reply first listed it:
      // such a claim, slow or lost (up to the call's timeout, 10 s), holds it
      // back. Allowed for any claim in flight (a little looser than src/).
      // Nor does a worker frozen, cut off or hanging in a call (a lost reply
      // waits for its timeout) hand anything back: that takes two heartbeat
      // replies (and a leader that could not watch the lease meanwhile may
      // not have judged it silent yet, WatchedFrom). Counted while healthy.
      const bool held_back = p->ClaimInFlightSince(now - FromMs(2 * t.max_net_delay.count() + 1));
      if (orphan_since_[i] < 0 || orphan_token_[i] != j.lease_token || held_back ||
          last_unhealthy_[static_cast<size_t>(p->process())] >= orphan_since_[i]) {
        orphan_since_[i] = now;
        orphan_token_[i] = j.lease_token;
      }
      // Once the lease has run out (its worker's heartbeats stopped), the
      // expired-lease check above takes over.
      const SimUs limit = FromMs(j.active_lease_ms + 5 * t.sweep.count()) + Margin();
      const SimUs runs_out = w_.LeaseExpiry(j);
      if (now - orphan_since_[i] > limit && runs_out + slack > now) {
        return w_.Fail(fmt::format(
            "(1) stuck: job {} is running in the store on worker {} ({}), which has not known "
            "it holds it since {:.3f}s; its heartbeats keep the lease alive (until {:.3f}s)",
            j.id, j.worker, p->info().name, Sec(orphan_since_[i]), Sec(runs_out)));
      }
    } else {
      orphan_since_[i] = -1;
    }
  }
}

void Checker::CheckRuns() {
  const SimUs now = w_.now();
  const auto& runs = w_.runs();
  const auto& procs = w_.processes();
  std::erase_if(active_, [&](int i) { return runs[i].ended >= 0; });
  for (size_t a = 0; a < active_.size(); ++a) {
    const RunTruth& run = runs[active_[a]];
    const SimWorker& p = *procs[run.process];
    if (!p.alive() || p.frozen()) continue;  // cannot act
    if (run.superseded >= 0) {
      // Its worker must have decided to kill it by then (the process group
      // dies a moment later), or have been frozen then and decide the
      // moment it thaws.
      const bool killing = run.stop_requested >= 0 && run.stop_requested <= run.superseded &&
                           now - run.stop_requested <= KillLatency();
      // (The grace is for runs the freeze caught, not for starting new ones.)
      const bool thawed_since = run.started < run.superseded && p.last_thaw() >= run.superseded &&
                                now - p.last_thaw() <= ThawGrace();
      if (!killing && !thawed_since) {
        return w_.Fail(fmt::format(
            "(6) job {}: its handler (token {}) still runs on {} at {:.3f}s, though the store "
            "took the job from that token at {:.3f}s (worker last thawed {}, stop requested {})",
            run.job, run.token, p.info().name, Sec(now), Sec(run.superseded),
            WhenOrNever(p.last_thaw()), WhenOrNever(run.stop_requested)));
      }
      continue;
    }
    // Self-fencing stops a run before its lease expires in the store (not
    // merely before the store hands the job on).
    const MemJob& j = w_.store().job(run.job);
    if (j.state == JobState::kRunning && j.lease_token == run.token && j.lease_expires_at) {
      const SimUs expiry = w_.LeaseExpiry(j);
      if (now > expiry) {
        const bool killing = run.stop_requested >= 0 && run.stop_requested <= expiry &&
                             now - run.stop_requested <= KillLatency();
        const bool thawed_since =
            run.started <= expiry && p.last_thaw() >= expiry && now - p.last_thaw() <= ThawGrace();
        if (!killing && !thawed_since) {
          return w_.Fail(fmt::format(
              "(6) job {}: its handler (token {}) still runs on {} at {:.3f}s, past the lease "
              "the store gave it ({:.3f}s), and its worker could act (stop requested {})",
              run.job, run.token, p.info().name, Sec(now), Sec(expiry),
              WhenOrNever(run.stop_requested)));
        }
      }
    }
    for (size_t b = 0; b < a; ++b) {
      const RunTruth& other = runs[active_[b]];
      const SimWorker& q = *procs[other.process];
      if (other.superseded >= 0 || !q.alive() || q.frozen()) continue;
      if (other.job == run.job) {
        return w_.Fail(fmt::format("(6) job {} runs on {} (token {}) and {} (token {}) at once",
                                   run.job, q.info().name, other.token, p.info().name, run.token));
      }
      if (!run.concurrency_key.empty() && other.concurrency_key == run.concurrency_key) {
        return w_.Fail(
            fmt::format("(4) handlers of jobs {} and {} (concurrency key '{}') really run at once",
                        other.job, run.job, run.concurrency_key));
      }
    }
  }
}

void Checker::CheckDeadlines() {
  const SimUs now = w_.now();
  for (size_t i = 0; i < deadlines_.size();) {
    const Deadline d = deadlines_[i];
    if (now < d.due) {
      ++i;
      continue;
    }
    deadlines_.erase(deadlines_.begin() + static_cast<std::ptrdiff_t>(i));
    const MemJob& j = w_.store().job(d.job);
    if (j.state != JobState::kRunning || j.lease_token != d.token) continue;  // recovered
    const SimWorker& p = *w_.processes()[d.process];
    const MemWorker* row = w_.store().worker(j.worker);
    if (d.by_proof && row && row->presumed_dead) {
      // Presumed dead (stale heartbeat) before it died: not listed as live,
      // so nobody proves its death; its leases free its jobs (README.md).
      Deadline later = d;
      later.by_proof = false;
      later.due = d.fault_at + FromMs(j.active_lease_ms) + RecoveryAfterLease();
      deadlines_.push_back(later);
      continue;
    }
    const bool still_out = d.fault_end < 0 || now < d.fault_end;
    if (!still_out) continue;  // back in time to hold it legitimately
    // A heartbeat its holder sent before the fault may land after it (a
    // slow link) and extend the lease: the bound runs from the lease it left.
    // So it does from a new leader's takeover, for a lease that leader could
    // not watch before (WatchedFrom).
    const SimUs after_expiry =
        WatchedFrom(j) + FromMs(j.active_lease_ms) + RecoveryAfterLease();
    if (!d.by_proof && after_expiry > d.due &&
        (j.extended_by == j.worker || WatchedFrom(j) > w_.LeaseWritten(j))) {
      Deadline later = d;
      later.due = after_expiry;
      deadlines_.push_back(later);
      continue;
    }
    const bool same_host = d.by_proof && w_.scenario().backend == Backend::kSqlite;
    if (!HelperThroughout(p, d.fault_at, same_host)) continue;  // nobody could recover it
    // The bound is lease + 2 sweep intervals (silence judged by watching). A
    // frozen or cut-off leader keeps it: a follower takes over once it has
    // watched the leader's row unchanged for its ttl (LeaderTtl, at most the
    // worker's lease), up to 2 passes later, and has watched the heartbeats
    // all along. Two exceptions: a job whose own lease is shorter than the
    // leader lease waits for that takeover; and when another worker led,
    // one whose sweep hangs on a lost reply (or two leaders failing one
    // after the other, README.md) delays every recovery until its role
    // passes on.
    const Timings& t = w_.scenario().t;
    const SimUs ttl = FromMs(LeaderTtl(t).count());
    const SimUs sweep = FromMs(t.sweep.count());
    if (!d.by_proof && !d.extended) {
      SimUs later_due = -1;
      for (size_t q = 0; q < leader_unhealthy_.size(); ++q) {
        if (leader_unhealthy_[q] < d.fault_at - ttl) continue;
        if (static_cast<int>(q) != d.process) {
          later_due = std::max(later_due, std::max(d.due, d.fault_at + FromMs(j.active_lease_ms)) +
                                              ttl + sweep);
        } else if (FromMs(j.active_lease_ms) < ttl) {
          later_due = std::max(later_due, d.fault_at + ttl + RecoveryAfterLease());
        }
      }
      if (later_due > d.due) {
        Deadline later = d;
        later.extended = true;
        later.due = later_due;
        deadlines_.push_back(later);
        continue;
      }
    }
    return w_.Fail(fmt::format(
        "(5) job {} (token {}) held by {} when it suffered '{}' at {:.3f}s is still running at "
        "{:.3f}s, past its recovery bound ({})",
        d.job, d.token, p.info().name, d.what, Sec(d.fault_at), Sec(now),
        d.by_proof ? "provable death: sweep interval + margin"
                   : "lease + 2 sweep intervals + margin"));
  }
}

void Checker::AtEnd() {
  for (const MemJob& j : w_.store().jobs()) {
    if (IsTerminal(j.state)) continue;
    if (w_.WaitsOnSteppedClock(j)) {
      w_.trace().Line(w_.now(), "job {} is due in {}ms by the store's clock, stepped back",
                      j.id, j.run_at - w_.StoreNow());
      continue;
    }
    return w_.Fail(
        fmt::format("(1) stuck: job {} is still {} at the end ({:.3f}s){}", j.id,
                    JobStateName(j.state), Sec(w_.now()),
                    j.state == JobState::kRunning
                        ? fmt::format(" on worker {} with token {}", j.worker, j.lease_token)
                        : std::string()));
  }
}

}  // namespace warden::sim
