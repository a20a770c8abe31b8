// Nodes (docs/nodes.md): invariant 8, node capacity, and what the node
// faults must leave true (timeline.h, CheckNodeCapacity / CheckNodeFaults).
#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "timeline.h"
#include "warden/duration.h"

namespace chaos {

using warden::AttemptInfo;
using warden::JobInfo;

namespace {

// The node each store worker id registered under.
std::map<int64_t, std::string> NodeOfWorker(const CheckInput& in) {
  std::map<int64_t, std::string> out;
  for (const warden::WorkerInfo& w : in.workers) out[w.id] = w.node;
  return out;
}

// An attempt a drain released: its node took no work for the worker's
// --shutdown-timeout (runtime/executor.cc's message).
bool DrainReleased(const AttemptInfo& a) {
  return a.error && a.error->kind == warden::ErrorKind::kReleased &&
         a.error->message.find("its node takes no more work") != std::string::npos;
}

std::string Seconds(int64_t ms) {
  return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000.0);
}

// Each node's capacity over time: as set up, then each node-resize's
// change and its setting back, each somewhere between its call's first try
// and its answer. A resize whose call failed may have committed: its new
// capacity may hold until the setting back is answered.
std::map<std::string, Limit> NodeLimits(const CheckInput& in) {
  std::map<std::string, Limit> out;
  for (const auto& [node, capacity] : in.node_limits) out.emplace(node, Limit(capacity));
  for (const FaultRecord& f : in.faults) {  // in the order they started, one at a time
    auto limit = out.find(f.node);
    if (f.kind != FaultKind::kNodeResize || f.resize_sent < 0 || limit == out.end()) continue;
    const int64_t back = f.restore_done >= 0 ? f.restore_done : INT64_MAX;
    const int64_t set = f.resize_failed ? back : f.resize_done;
    limit->second.changes.push_back({f.resize_sent, set, f.resized_to});
    limit->second.changes.push_back(
        {f.resize_failed || f.restore_sent < 0 ? set : f.restore_sent, back,
         limit->second.initial});
  }
  return out;
}

// The most a node's capacity was at any moment up to `t`: jobs admitted
// under it may still run after a lowering.
int64_t HighestUntil(const Limit& limit, int64_t t) {
  int64_t most = limit.initial;
  for (const LimitChange& c : limit.changes) {
    if (c.from <= t) most = std::max(most, c.limit);
  }
  return most;
}

}  // namespace

Invariant CheckNodeCapacity(const CheckInput& in, const Timeline& tl,
                            const std::map<RunKey, Run>& runs,
                            const std::map<RunKey, int64_t>& stale_since, CheckResult* out) {
  const std::map<std::string, Limit> node_limits = NodeLimits(in);
  std::string limits, resized;
  for (const auto& [node, limit] : node_limits) {
    if (!limits.empty()) limits += ", ";
    limits += fmt::format("{} jobs on {}", limit.initial, node);
    const size_t times = limit.changes.size() / 2;
    if (times == 0) continue;
    resized += fmt::format("; {} resized {}", node,
                           times == 1 ? std::string("once") : fmt::format("{} times", times));
  }
  if (!resized.empty()) {
    resized += ": the runs alive at once held to the capacity at the latest of their claims";
  }
  Invariant inv{fmt::format(
      "8. node capacity: at most {} running at once (ledger runs, store attempts, sampled "
      "running jobs){}",
      limits, resized)};
  const std::map<int64_t, std::string> node_of = NodeOfWorker(in);
  auto node = [&](int64_t worker) {
    auto n = node_of.find(worker);
    return n == node_of.end() ? std::string() : n->second;
  };
  CapacityCheck check;
  check.what = "node";
  check.limits = node_limits;
  check.key_of_run = [&](const Run& r) { return node(r.worker); };
  check.key_of_attempt = [&](const JobInfo&, const AttemptInfo& a) { return node(a.worker); };
  const CapacityLoads loads = CheckCapacity(in, tl, runs, stale_since, check, &inv);
  out->node_stale_overlaps = loads.stale_overlaps;

  std::map<std::string, std::pair<size_t, int64_t>> sampled;  // node: samples, max
  for (const NodeSample& s : in.node_samples) {
    auto limit = node_limits.find(s.node);
    if (limit == node_limits.end()) continue;
    auto& [n, max] = sampled[s.node];
    ++n;
    max = std::max(max, s.running);
    // After a lowering, what runs may be over the new capacity: a sample is
    // held to the highest so far (the ledger's and the store's counts above
    // judge each start by its own).
    const int64_t highest = HighestUntil(limit->second, s.ms);
    if (s.running > highest) {
      inv.Flag(fmt::format("node {} (sampled): {} jobs running at {} (capacity {})", s.node,
                            s.running, Clock(s.ms), highest));
    }
  }
  std::string notes;
  for (const auto& [name, limit] : in.node_limits) {
    const KeyLoad& ledger = loads.ledger.at(name);
    const KeyLoad& store = loads.store.at(name);
    const auto& [n, max] = sampled[name];
    if (!notes.empty()) notes += "; ";
    notes += fmt::format(
        "node {}: {} runs, at most {} live at once (at its capacity for {}); store: at most {} "
        "attempts open (at its capacity for {}); {} samples, at most {} running",
        name, ledger.spans, ledger.peak_live, Seconds(ledger.at_limit_ms), store.peak_live,
        Seconds(store.at_limit_ms), n, max);
  }
  inv.note = notes + "; " +
             (loads.stale_overlaps == 0
                  ? std::string("no stale overlap")
                  : fmt::format("{} stale overlaps excused under 6 (over the capacity only with "
                                "runs the store had taken back; at most {} alive, the longest "
                                "{} ms)",
                                loads.stale_overlaps, loads.stale_overlap_peak,
                                loads.stale_overlap_max_ms)) +
             (in.node_sample_failures > 0
                  ? fmt::format(" ({} reads failed: store outages)", in.node_sample_failures)
                  : "");
  return inv;
}

Invariant CheckNodeFaults(const CheckInput& in, const Timeline& tl) {
  Invariant inv{
      "+  a node that takes no work gets none (no claim while disabled or removed), and a drain "
      "releases jobs only after --shutdown-timeout"};
  const std::map<int64_t, std::string> node_of = NodeOfWorker(in);
  std::map<std::string, int> ran;  // by kind
  int closed = 0;
  int64_t closed_ms = 0;
  int workers_released = 0;
  int64_t jobs_recovered = 0;
  for (const FaultRecord& f : in.faults) {
    if (!IsNodeFault(f.kind) || f.skipped) continue;
    ++ran[FaultName(f.kind)];
    workers_released += f.workers_released;
    jobs_recovered += f.jobs_recovered;
    if (f.closed_from >= 0 && f.closed_until > f.closed_from) {
      ++closed;
      closed_ms += f.closed_until - f.closed_from;
    }
  }
  int claims_checked = 0, drained = 0;
  std::set<int64_t> drained_jobs;
  for (const JobInfo& j : in.jobs) {
    for (const AttemptInfo& a : j.attempts) {
      auto n = node_of.find(a.worker);
      if (n == node_of.end()) continue;
      for (const FaultRecord& f : in.faults) {
        if (!IsNodeFault(f.kind) || f.skipped || f.node != n->second || f.closed_from < 0 ||
            f.closed_until < 0) {
          continue;
        }
        if (a.claimed_at > f.closed_from && a.claimed_at < f.closed_until) {
          inv.Flag(fmt::format("job {} {}: claimed on node {} at {}, while its {} (closed "
                                "{}..{}) had it take no work",
                                j.id, DescribeAttempt(a, tl), f.node, Clock(a.claimed_at),
                                FaultName(f.kind), Clock(f.closed_from), Clock(f.closed_until)));
        }
      }
      ++claims_checked;
      if (!DrainReleased(a) || !a.finished_at) continue;
      ++drained;
      drained_jobs.insert(j.id);
      // The node's latest closing before the release: the drain gave the
      // jobs the workers' --shutdown-timeout from no earlier than its send.
      const FaultRecord* last = nullptr;
      for (const FaultRecord& f : in.faults) {
        if (ClosesNode(f.kind) && f.node == n->second && f.close_sent >= 0 &&
            f.close_sent <= *a.finished_at && (!last || f.close_sent > last->close_sent)) {
          last = &f;
        }
      }
      const int64_t timeout = in.options->shutdown_timeout.count();
      if (last == nullptr) {
        inv.Flag(fmt::format("job {} {}: released by a drain of node {} that no node fault "
                              "closed",
                              j.id, DescribeAttempt(a, tl), n->second));
      } else if (*a.finished_at < last->close_sent + timeout) {
        inv.Flag(fmt::format("job {} {}: released by a drain {} ms after its node {} was "
                              "closed ({} sent {}), before --shutdown-timeout {}",
                              j.id, DescribeAttempt(a, tl), *a.finished_at - last->close_sent,
                              n->second, FaultName(last->kind), Clock(last->close_sent),
                              warden::FormatDuration(in.options->shutdown_timeout)));
      }
    }
  }
  // After a loss or a crash, another node first (docs/nodes.md): a
  // preference, so counted, not flagged; but the store's mark must hold: a
  // job is never claimed on the node it was kept from before its time.
  int losses = 0, moved = 0, kept = 0;
  for (const JobInfo& j : in.jobs) {
    for (size_t i = 0; i + 1 < j.attempts.size(); ++i) {
      const AttemptInfo& a = j.attempts[i];
      const bool loss = a.outcome == "crash" || (a.outcome == "lost" && a.lost_by != "release");
      auto from = node_of.find(a.worker), to = node_of.find(j.attempts[i + 1].worker);
      if (!loss || from == node_of.end() || to == node_of.end()) continue;
      ++losses;
      if (from->second != to->second) ++moved;
    }
    if (!j.avoid_node_until) continue;
    ++kept;
    // The mark is the last failure's (each failure writes or clears it): so
    // it is about the attempt before a last one that runs or succeeded.
    if (j.attempts.size() < 2) continue;
    const AttemptInfo& next = j.attempts.back();
    if (next.outcome != "running" && next.outcome != "succeeded") continue;
    auto on = node_of.find(next.worker);
    if (on != node_of.end() && on->second == j.avoid_node &&
        next.claimed_at < *j.avoid_node_until) {
      inv.Flag(fmt::format("job {} {}: claimed on node {} at {}, though kept from it until {}",
                            j.id, DescribeAttempt(next, tl), j.avoid_node, Clock(next.claimed_at),
                            Clock(*j.avoid_node_until)));
    }
  }
  std::string kinds;
  int total = 0;
  for (const auto& [kind, n] : ran) {
    kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", n, kind);
    total += n;
  }
  inv.note = fmt::format(
      "{} node faults ({}): nodes closed {} times, {} in all; {} attempts checked; drains "
      "released {} running jobs ({} attempts); forced removals released {} live workers and "
      "recovered {} jobs at once; after a loss or crash, {} of {} next attempts ran on "
      "another node ({} jobs still marked)",
      total, kinds.empty() ? "none" : kinds, closed, Seconds(closed_ms), claims_checked,
      drained_jobs.size(), drained, workers_released, jobs_recovered, moved, losses, kept);
  return inv;
}

}  // namespace chaos
