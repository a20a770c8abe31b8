#include "scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "prng.h"

namespace warden::sim {

const char* FaultName(FaultKind k) {
  switch (k) {
    case FaultKind::kPause:
      return "pause";
    case FaultKind::kWorkerPause:
      return "worker-pause";
    case FaultKind::kSuspend:
      return "suspend";
    case FaultKind::kKill:
      return "kill";
    case FaultKind::kPowerLoss:
      return "power-loss";
    case FaultKind::kPartition:
      return "partition";
    case FaultKind::kFlaky:
      return "flaky-network";
    case FaultKind::kDrain:
      return "drain";
    case FaultKind::kSessionCut:
      return "session-cut";
  }
  return "?";
}

namespace {

Millis Ms(int64_t v) { return Millis(v); }

Timings DrawTimings(Rng& rng, Backend backend) {
  Timings t;
  t.heartbeat = Ms(rng.Range(100, 1000));
  t.lease = std::max(Ms(300), t.heartbeat * rng.Range(3, 8));
  t.keepalive = Ms(t.lease.count() * rng.Range(50, 300) / 100);
  t.sweep = Ms(rng.Range(100, 1000));
  t.poll = Ms(rng.Range(200, 1000));
  t.shutdown_timeout = Ms(rng.Range(0, 2 * t.lease.count()));
  if (backend == Backend::kSqlite) {
    t.call_timeout = Ms(5000);  // busy_timeout: then "database is locked", no effect
    t.max_net_delay = Ms(2);
  } else {
    t.call_timeout = Ms(10'000);  // tcp_user_timeout
    t.max_net_delay = Ms(10);
  }
  return t;
}

JobPlan DrawJob(Rng& rng, const Timings& t, SimUs faults_end) {
  JobPlan j;
  JobSpec& s = j.spec;
  s.task = "work";
  s.priority = static_cast<int>(rng.Range(0, 2));
  if (rng.Percent(20)) s.delay = Ms(rng.Range(0, 3000));
  s.delivery = rng.Percent(25) ? Delivery::kAtMostOnce : Delivery::kAtLeastOnce;
  const int r = static_cast<int>(rng.Range(0, 99));
  s.retry = r < 15 ? RetryPolicy::kNone : r < 85 ? RetryPolicy::kDefault : RetryPolicy::kForever;
  s.max_attempts = static_cast<int>(rng.Range(1, 5));
  s.max_crashes = static_cast<int>(rng.Range(1, 4));
  if (rng.Percent(20)) s.lease = Ms(rng.Range(1000, std::max<int64_t>(1000, 3 * t.lease.count())));
  if (rng.Percent(35)) s.concurrency_key = fmt::format("key{}", rng.Range(0, 2));
  if (rng.Percent(10)) s.start_deadline = Ms(rng.Range(500, 10'000));
  j.enqueue_at = rng.Percent(60) ? 0 : rng.Range(0, faults_end);
  const int f = static_cast<int>(rng.Range(0, 99));
  j.failing_attempts = f < 60 ? 0 : f < 85 ? 1 : 2;
  j.fail_by_crash = rng.Percent(30);
  j.min_run_ms = rng.Range(0, t.lease.count());
  j.max_run_ms = j.min_run_ms + rng.Range(0, 2 * t.lease.count());
  // A job retried for ever must be able to succeed: no timeout shorter than its run.
  const bool short_timeout = rng.Percent(10) && s.retry != RetryPolicy::kForever;
  s.timeout = short_timeout ? Ms(std::max<int64_t>(1, rng.Range(j.min_run_ms / 2, j.max_run_ms)))
                            : Millis(30 * 60 * 1000);
  j.checkpoints = rng.Percent(30);
  return j;
}

FaultKind DrawFaultKind(Rng& rng, Backend backend, const KnownIssues& extra) {
  while (true) {
    const int r = static_cast<int>(rng.Range(0, 129));
    FaultKind k = r < 25    ? FaultKind::kPause
                  : r < 45  ? FaultKind::kKill
                  : r < 55  ? FaultKind::kPowerLoss
                  : r < 70  ? FaultKind::kPartition
                  : r < 85  ? FaultKind::kFlaky
                  : r < 100 ? FaultKind::kDrain
                  : r < 115 ? FaultKind::kSuspend
                            : FaultKind::kSessionCut;
    if (k == FaultKind::kSessionCut && !(extra.session_cut && backend == Backend::kPostgres))
      continue;
    // One SQLite host: a lost host takes every worker and the file with it;
    // a partition from a local file does not exist.
    if (backend == Backend::kSqlite && (k == FaultKind::kPowerLoss || k == FaultKind::kPartition)) {
      continue;
    }
    return k;
  }
}

// Jobs much shorter than a claim's round trip: their workers claim ahead
// of their free slots (core/claim_ahead.h).
void DrawShortJobs(Rng& more, std::vector<JobPlan>& jobs) {
  if (!more.Percent(30)) return;
  for (JobPlan& j : jobs) {
    if (!more.Percent(70)) continue;
    j.min_run_ms = 0;
    j.max_run_ms = more.Range(0, 2);
  }
}

// Half the pauses stop the worker alone (SIGSTOP of its pid). Some pauses
// and suspends begin at the worker's next job spawn: between the slot's
// check and the job's exec.
void SplitPauses(Rng& more, std::vector<FaultPlan>& faults) {
  for (FaultPlan& f : faults) {
    if (f.kind == FaultKind::kPause && more.Percent(50)) f.kind = FaultKind::kWorkerPause;
    if (f.kind == FaultKind::kWorkerPause) {
      f.at_spawn = more.Percent(50);
    } else if (f.kind == FaultKind::kPause || f.kind == FaultKind::kSuspend) {
      f.at_spawn = more.Percent(25);
    }
  }
}

// Half the runs see the store's wall clock step, one to three times, either
// way, by 300 ms to 6 h: a decade drawn first, so short and long steps are
// alike frequent.
void DrawClockSteps(Rng& rng, Scenario& sc) {
  if (!rng.Percent(50)) return;
  const int n = rng.Percent(60) ? 1 : rng.Percent(60) ? 2 : 3;
  constexpr int64_t kDecades[][2] = {{300, 1000},          {1000, 10'000},
                                     {10'000, 100'000},    {100'000, 1'000'000},
                                     {1'000'000, 21'600'000}};
  for (int i = 0; i < n; ++i) {
    ClockStep step;
    step.at = rng.Range(FromMs(200), sc.faults_end);
    const auto& d = kDecades[rng.Range(0, 4)];
    step.by = Millis(rng.Range(d[0], d[1]) * (rng.Percent(50) ? 1 : -1));
    sc.clock_steps.push_back(step);
  }
  std::sort(sc.clock_steps.begin(), sc.clock_steps.end(),
            [](const ClockStep& a, const ClockStep& b) { return a.at < b.at; });
}

}  // namespace

Scenario DrawScenario(const RunOptions& options) {
  Rng rng(Mix(options.seed, 0x5ce7a410));
  Scenario sc;
  sc.seed = options.seed;
  sc.backend = rng.Percent(40) ? Backend::kSqlite : Backend::kPostgres;
  sc.t = DrawTimings(rng, sc.backend);
  sc.faults_end = FromMs(rng.Range(3000, 20'000));
  sc.give_up_at = sc.faults_end + FromMs(120'000);

  const int workers = static_cast<int>(rng.Range(2, 4));
  for (int i = 0; i < workers; ++i) {
    WorkerPlan w;
    w.name = fmt::format("w{}", i);
    w.node = sc.backend == Backend::kSqlite ? 0 : i;
    // SQLite: a worker in another container (pid namespace) cannot have
    // its death proven by the others.
    w.pid_ns = sc.backend == Backend::kSqlite && i > 0 && rng.Percent(25) ? 1 : 0;
    w.drift_ppm = rng.Range(-10'000, 10'000);
    w.concurrency = static_cast<int>(rng.Range(1, 4));
    w.start_at = FromMs(rng.Range(0, 500));
    sc.workers.push_back(w);
  }
  const int jobs = static_cast<int>(rng.Range(5, 25));
  for (int i = 0; i < jobs; ++i) sc.jobs.push_back(DrawJob(rng, sc.t, sc.faults_end));
  // Drawn from a stream of its own, so that every other draw of a seed is
  // what it was before these were added.
  Rng more(Mix(options.seed, 0xc1a13a4e));
  DrawShortJobs(more, sc.jobs);
  // Long enough for one worker running one job at a time to do it all.
  for (const JobPlan& j : sc.jobs) sc.give_up_at += FromMs(j.max_run_ms * (j.failing_attempts + 2));

  const int faults = static_cast<int>(rng.Range(0, 4));
  for (int i = 0; i < faults; ++i) {
    FaultPlan f;
    f.kind = DrawFaultKind(rng, sc.backend, options.issues);
    f.worker = static_cast<int>(rng.Range(0, workers - 1));
    f.at = rng.Range(FromMs(200), sc.faults_end);
    const int64_t lease = sc.t.lease.count();
    switch (f.kind) {
      case FaultKind::kPause:
      case FaultKind::kWorkerPause:
      case FaultKind::kSuspend:
      case FaultKind::kPartition:
        f.duration = FromMs(rng.Range(lease / 5, 3 * lease));
        break;
      case FaultKind::kFlaky:
        f.duration = FromMs(rng.Range(lease / 2, 3 * lease));
        break;
      case FaultKind::kSessionCut:
        f.duration = FromMs(rng.Range(100, 2000));
        break;
      case FaultKind::kKill:
      case FaultKind::kPowerLoss:
      case FaultKind::kDrain:
        // Worker 0 always comes back, so someone is left to finish the work.
        if (f.worker == 0 || rng.Percent(60)) f.restart_after = FromMs(rng.Range(0, 3000));
        break;
    }
    sc.faults.push_back(f);
  }
  SplitPauses(more, sc.faults);
  std::sort(sc.faults.begin(), sc.faults.end(),
            [](const FaultPlan& a, const FaultPlan& b) { return a.at < b.at; });

  const int ops = static_cast<int>(rng.Range(0, 2));
  for (int i = 0; i < ops; ++i) {
    OperatorPlan op;
    op.kind = rng.Percent(50) ? OperatorKind::kCancel : OperatorKind::kRetry;
    op.job = static_cast<int>(rng.Range(0, jobs - 1));
    op.at = rng.Range(0, sc.faults_end);
    sc.ops.push_back(op);
  }
  // A stream of its own too: every other draw of a seed stays as it was.
  Rng steps(Mix(options.seed, 0xc10c57e9));
  DrawClockSteps(steps, sc);
  return sc;
}

std::string Scenario::Describe() const {
  std::string s = fmt::format(
      "scenario seed={} backend={} heartbeat={}ms lease={}ms keepalive={}ms sweep={}ms "
      "poll={}ms shutdown_timeout={}ms call_timeout={}ms faults_end={}ms\n",
      seed, backend == Backend::kSqlite ? "sqlite" : "postgres", t.heartbeat.count(),
      t.lease.count(), t.keepalive.count(), t.sweep.count(), t.poll.count(),
      t.shutdown_timeout.count(), t.call_timeout.count(), faults_end / kUsPerMs);
  for (const WorkerPlan& w : workers) {
    s += fmt::format("  worker {} node={} pid_ns={} drift={}ppm concurrency={} start={}ms\n",
                     w.name, w.node, w.pid_ns, w.drift_ppm, w.concurrency, w.start_at / kUsPerMs);
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobPlan& j = jobs[i];
    s += fmt::format(
        "  job#{} at={}ms {} retry={} max_attempts={} max_crashes={} key='{}' lease={} "
        "deadline={} delay={}ms run={}..{}ms timeout={}ms fails={}{}{}\n",
        i, j.enqueue_at / kUsPerMs, DeliveryName(j.spec.delivery), RetryPolicyName(j.spec.retry),
        j.spec.max_attempts, j.spec.max_crashes, j.spec.concurrency_key,
        j.spec.lease ? fmt::format("{}ms", j.spec.lease->count()) : "-",
        j.spec.start_deadline ? fmt::format("{}ms", j.spec.start_deadline->count()) : "-",
        j.spec.delay.count(), j.min_run_ms, j.max_run_ms, j.spec.timeout.count(),
        j.failing_attempts, j.fail_by_crash ? " (crash)" : "", j.checkpoints ? " checkpoint" : "");
  }
  for (const FaultPlan& f : faults) {
    s += fmt::format("  fault {} on {} at={}ms{} duration={}ms restart={}\n", FaultName(f.kind),
                     workers[f.worker].name, f.at / kUsPerMs, f.at_spawn ? " (next spawn)" : "",
                     f.duration / kUsPerMs,
                     f.restart_after ? fmt::format("{}ms", *f.restart_after / kUsPerMs) : "-");
  }
  for (const OperatorPlan& op : ops) {
    s += fmt::format("  operator {} job#{} at={}ms\n",
                     op.kind == OperatorKind::kCancel ? "cancel" : "retry", op.job,
                     op.at / kUsPerMs);
  }
  for (const ClockStep& c : clock_steps) {
    s += fmt::format("  store clock steps {} by {}ms at={}ms\n",
                     c.by.count() > 0 ? "forward" : "back", std::abs(c.by.count()),
                     c.at / kUsPerMs);
  }
  return s;
}

}  // namespace warden::sim
