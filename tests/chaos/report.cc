#include "report.h"

#include <fmt/core.h>

#include <cmath>
#include <map>

#include "warden/duration.h"

namespace chaos {
namespace {

// Nearest-rank percentile of sorted samples.
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank =
      static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace

void PrintReport(const Options& o, const RunFacts& facts,
                 const std::vector<FaultRecord>& faults, const CheckResult& r) {
  const auto d = [](Millis m) { return warden::FormatDuration(m); };
  fmt::print("\n==== warden chaos summary ====\n");
  fmt::print("backend {}, seed {:#018x}, {} jobs, {} workers x {} slots\n",
             facts.backend, o.seed, o.jobs, o.workers, o.concurrency);
  fmt::print(
      "heartbeat {}, lease {}, sweep {}; fault window {:.1f}s, drain {:.1f}s, "
      "total {:.1f}s\n",
      d(o.heartbeat), d(o.lease), d(o.sweep), facts.window_s, facts.drain_s,
      facts.total_s);
  if (o.nodes > 0) {
    fmt::print("{} nodes{}; the workers' shutdown timeout (a drained node's jobs) {}\n", o.nodes,
               o.node_capacity > 0 ? fmt::format(", node-1 of capacity {}", o.node_capacity)
                                   : std::string(),
               d(o.shutdown_timeout));
  }

  fmt::print("\nJobs by final state\n ");
  for (const auto& [state, n] : r.by_state) fmt::print(" {} {}", state, n);
  if (!r.dead_by_kind.empty()) {
    fmt::print("\n  dead by last error:");
    for (const auto& [kind, n] : r.dead_by_kind) fmt::print(" {} {}", kind, n);
  }
  fmt::print(
      "\n  {} runs in the ledger; {} writes refused by fencing; {} attempts "
      "rescued\n",
      r.runs, facts.fenced_writes, facts.rescued);
  if (facts.feeder_failed > 0 || facts.feeder_recognised > 0) {
    fmt::print(
        "  feeder: {} enqueue attempts failed and were retried; {} jobs found "
        "already "
        "stored on retry\n",
        facts.feeder_failed, facts.feeder_recognised);
  }

  if (facts.startup_failures > 0) {
    fmt::print(
        "  {} worker processes exited at start-up because the store was "
        "unavailable "
        "(respawned)\n",
        facts.startup_failures);
  }
  fmt::print("\nFaults               injected  skipped\n");
  std::map<std::string, std::pair<int, int>> by_kind;
  for (const FaultRecord& f : faults) {
    auto& [done, skipped] = by_kind[FaultName(f.kind)];
    (f.skipped ? skipped : done)++;
  }
  for (const auto& [kind, n] : by_kind) {
    fmt::print("  {:<18} {:>8}  {:>7}\n", kind, n.first, n.second);
  }

  fmt::print(
      "\nRecovery after a worker fault (s)       samples    p50    p99    max  "
      "bound\n");
  auto line = [](const std::string& what, const std::vector<double>& v,
                 double bound) {
    fmt::print("  {:<37} {:>7} {:>6.3f} {:>6.3f} {:>6.3f} {:>6.2f}\n", what,
               v.size(), Percentile(v, 0.5), Percentile(v, 0.99),
               v.empty() ? 0.0 : v.back(), bound);
  };
  for (const RecoveryRow& row : r.recovery) {
    line(row.what, row.samples, row.bound);
    if (!row.disturbed.empty()) {
      line("  after a store outage (from its end)", row.disturbed,
           row.bound + 2);
    }
    if (!row.leader_hit.empty()) {
      fmt::print("  {:<37} {:>7} {:>6.3f} {:>6.3f} {:>6.3f}  (each: from the leader's fault, its "
                 "ttl + 2 sweeps)\n",
                 "  the leader hit meanwhile", row.leader_hit.size(),
                 Percentile(row.leader_hit, 0.5), Percentile(row.leader_hit, 0.99),
                 row.leader_hit.back());
    }
    if (row.over > 0 || row.unrecovered > 0) {
      fmt::print("  {:<37} {} past the bound, {} never recovered\n", "",
                 row.over, row.unrecovered);
    }
  }

  fmt::print("\nInvariants\n");
  for (const Invariant& inv : r.invariants) {
    fmt::print("  [{}] {}\n", inv.ok ? " ok " : "FAIL", inv.name);
    if (!inv.note.empty()) fmt::print("         {}\n", inv.note);
    for (const std::string& e : inv.evidence) fmt::print("         - {}\n", e);
    for (const std::string& e : inv.details) fmt::print("         ~ {}\n", e);
    if (inv.violations > static_cast<int>(inv.evidence.size())) {
      fmt::print("         ... {} more\n",
                 inv.violations - static_cast<int>(inv.evidence.size()));
    }
  }
  fmt::print("\n{}\n", r.ok() ? "ALL INVARIANTS HOLD" : "AN INVARIANT FAILED");
  fmt::print("seed {:#018x}\nrerun: {}\n", o.seed, o.RerunCommand());
  if (!facts.run_dir.empty())
    fmt::print("run directory (ledger, worker logs): {}\n", facts.run_dir);
}

}  // namespace chaos
