// Invariant 5: how long a worker fault kept its jobs from running again.
//
// For each kill, freeze or cut, every attempt its worker held at that moment
// (claimed before, not finished before) gives one sample: when the store
// ended that attempt (recovered it, or the worker's own outcome landed)
// minus the fault's time. Bounds (docs/design.md, invariant 5):
//   killed worker (death provable: same host, or PostgreSQL session gone):
//     sweep interval + --kill-margin; so too the workers a forced node
//     removal killed (the removal releases them at once, if the sweep has
//     not proven them dead first)
//   frozen worker or host, cut-off host (unprovable): lease + 2 sweep
//     intervals (silence is judged by watching, core/silence.h)
//     + --freeze-margin
// A sample whose window meets a store outage (lock, restart, terminated
// sessions) is measured from the end of the outage, and allowed 2 s more:
// the workers' store reconnect backoff is capped at 2 s.
// A sample whose window meets a fault of the maintenance leader itself
// (killed, frozen or cut off while the job waited for it) is allowed until
// the role has passed on and the new leader has swept: from that fault,
// the leader's ttl (min(3 sweeps, lease): its row must be seen unrenewed
// that long) + 2 sweep intervals, + 1 s on PostgreSQL (a leader frozen
// inside a transaction holds its row locks until the server ends the
// session) + --freeze-margin; docs/guarantees.md, "Recovery guarantees and
// their bounds".
// The new leader recovers at once only the leases it has watched whole:
// when it had itself just come back (registered again, thawed, or
// reconnected after a partition or a store outage), a sample is also
// allowed until that return + lease + 2 sweep intervals (+ 1 s on
// PostgreSQL) + --freeze-margin. That holds too when the fault that
// hit the job's worker hit the leader with it.
#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "checker.h"
#include "warden/duration.h"
#include "timeline.h"

namespace chaos {

void CheckRecoveryTimes(const CheckInput& in, const Timeline& tl,
                        std::vector<RecoveryRow>* rows, Invariant* inv) {
  const Options& o = *in.options;
  const int64_t kill_bound = o.sweep.count() + o.kill_margin.count();
  const int64_t freeze_bound =
      o.lease.count() + 2 * o.sweep.count() + o.freeze_margin.count();
  constexpr int64_t kOutageSlack = 2000;
  const int64_t leader_bound = std::min(3 * o.sweep.count(), o.lease.count()) +
                               2 * o.sweep.count() +
                               (o.backend == Backend::kSqlite ? 0 : 1000) +
                               o.freeze_margin.count();
  const int64_t watch_bound = o.lease.count() + 2 * o.sweep.count() +
                              (o.backend == Backend::kSqlite ? 0 : 1000) +
                              o.freeze_margin.count();
  // The start of a fault of the leader within [from, until] (other than
  // `self`, unless `with_self`), or -1.
  auto leader_fault = [&](const FaultRecord& self, int64_t from, int64_t until,
                          bool with_self) -> int64_t {
    for (const FaultRecord& g : in.faults) {
      if ((&g == &self && !with_self) || g.skipped || g.start_ms < from || g.start_ms > until) {
        continue;
      }
      if (g.kind != FaultKind::kKillWorker && g.kind != FaultKind::kFreezeWorker &&
          g.kind != FaultKind::kFreezeHost && g.kind != FaultKind::kPartition &&
          g.kind != FaultKind::kNodeForceRemove) {
        continue;
      }
      for (pid_t pid : g.pids) {
        if (tl.WasLeader(pid, g.start_ms)) return g.start_ms;
      }
    }
    return -1;
  };
  struct Kind {
    FaultKind kind;
    const char* what;
    int64_t bound;
  };
  const Kind kinds[] = {
      {FaultKind::kKillWorker, "killed workers (death provable)", kill_bound},
      {FaultKind::kFreezeWorker, "frozen worker processes", freeze_bound},
      {FaultKind::kFreezeHost, "frozen hosts (worker + jobs)", freeze_bound},
      {FaultKind::kPartition, "cut-off hosts (partition)", freeze_bound},
      // Its workers killed, then released by the operator's --force.
      {FaultKind::kNodeForceRemove, "force-removed nodes (workers killed)", kill_bound},
  };
  for (const Kind& k : kinds) {
    if (!o.faults.count(k.kind)) continue;
    RecoveryRow row;
    row.what = k.what;
    row.bound = static_cast<double>(k.bound) / 1000.0;
    for (const FaultRecord& f : in.faults) {
      if (f.kind != k.kind || f.skipped || f.start_ms < 0) continue;
      const int64_t at = f.start_ms;
      std::set<int64_t> ids;
      for (pid_t pid : f.pids) {
        for (int64_t id : tl.WorkerIdsOf(pid, at)) ids.insert(id);
      }
      for (const warden::JobInfo& j : in.jobs) {
        for (const warden::AttemptInfo& a : j.attempts) {
          if (!ids.count(a.worker) || a.claimed_at > at) continue;
          if (a.finished_at && *a.finished_at < at) continue;
          if (!a.finished_at) {
            ++row.unrecovered;
            inv->ok = false;
            ++inv->violations;
            inv->evidence.push_back(
                fmt::format("job {} attempt {}: held by {} at its {} and never "
                            "ended",
                            j.id, a.attempt, f.target, FaultName(k.kind)));
            continue;
          }
          int64_t from = at, bound = k.bound;
          for (const auto& [start, end] : tl.outages()) {
            if (start <= at + k.bound && end >= at) {
              from = std::max(from, end);
              bound = k.bound + kOutageSlack;
            }
          }
          const int64_t before = bound;
          int64_t leader_hit = leader_fault(f, at, from + bound, /*with_self=*/false);
          if (leader_hit >= 0) bound = std::max(bound, leader_hit - from + leader_bound);
          const int64_t any_hit = leader_fault(f, at, from + bound, /*with_self=*/true);
          if (const Timeline::LeaderSpan* next = any_hit >= 0 ? tl.LeaderFrom(any_hit) : nullptr) {
            const int64_t watching = tl.WatchingSince(next->pid, next->from, kOutageSlack);
            if (watching > any_hit) {
              bound = std::max(bound, watching - from + watch_bound);
              if (bound != before) leader_hit = any_hit;
            }
          }
          if (bound == before) leader_hit = -1;  // it allowed nothing more
          const int64_t took = std::max<int64_t>(0, *a.finished_at - from);
          (leader_hit >= 0 ? row.leader_hit : bound != k.bound ? row.disturbed : row.samples)
              .push_back(static_cast<double>(took) / 1000.0);
          if (took > bound) {
            ++row.over;
            inv->ok = false;
            ++inv->violations;
            if (inv->evidence.size() < 12) {
              inv->evidence.push_back(fmt::format(
                  "job {} attempt {} (token {}): {} of {} at {}; the store "
                  "ended the attempt "
                  "({}) {:.3f}s later{}, bound {:.3f}s",
                  j.id, a.attempt, a.lease_token, FaultName(k.kind), f.target,
                  warden::FormatTime(at).substr(11), a.outcome, took / 1000.0,
                  from != at ? " (counted from the end of a store outage)"
                  : leader_hit >= 0 ? " (the leader was hit meanwhile)"
                                    : "",
                  bound / 1000.0));
            }
          }
        }
      }
    }
    std::sort(row.samples.begin(), row.samples.end());
    std::sort(row.disturbed.begin(), row.disturbed.end());
    std::sort(row.leader_hit.begin(), row.leader_hit.end());
    rows->push_back(std::move(row));
  }
  int samples = 0;
  for (const RecoveryRow& r : *rows) {
    samples += static_cast<int>(r.samples.size() + r.disturbed.size() + r.leader_hit.size());
  }
  inv->note = fmt::format("{} samples; bounds: killed {}, frozen/cut {}",
                          samples, warden::FormatDuration(Millis(kill_bound)),
                          warden::FormatDuration(Millis(freeze_bound)));
}

}  // namespace chaos
