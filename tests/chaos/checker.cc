#include "checker.h"

#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "warden/duration.h"
#include "warden/invariants.h"
#include "timeline.h"

namespace chaos {

using warden::AttemptInfo;
using warden::JobInfo;

namespace {

// 7. Flow control: at most in.limit of the limited queue's jobs running at
// once, from the ledger, the store's attempts and the sampled running jobs.
Invariant CheckLimit(const CheckInput& in, const Timeline& tl,
                     const std::map<RunKey, Run>& runs,
                     const std::map<RunKey, int64_t>& stale_since, CheckResult* out) {
  Invariant inv{fmt::format(
      "7. at most {} of queue {}'s jobs running at once (ledger runs, store attempts, "
      "sampled running jobs)",
      in.limit, in.limited_queue)};
  std::map<int64_t, std::string> queue_of;  // job id -> queue
  for (const JobInfo& j : in.jobs) queue_of[j.id] = j.queue;
  CapacityCheck check;
  check.what = "queue";
  check.limits = {{in.limited_queue, in.limit}};
  check.key_of_run = [&](const Run& r) {
    auto q = queue_of.find(r.job);
    return q == queue_of.end() ? std::string() : q->second;
  };
  check.key_of_attempt = [](const JobInfo& j, const AttemptInfo&) { return j.queue; };
  const CapacityLoads loads = CheckCapacity(in, tl, runs, stale_since, check, &inv);
  out->limit_stale_overlaps = loads.stale_overlaps;

  int64_t sampled_max = 0;
  for (const FlowSample& s : in.flow_samples) {
    sampled_max = std::max(sampled_max, s.running);
    if (s.running <= in.limit) continue;
    std::string holders;
    for (int64_t id : s.jobs) {
      if (!holders.empty()) holders += ", ";
      holders += std::to_string(id);
    }
    inv.Flag(fmt::format("queue {} (sampled): {} jobs running at {} (limit {}): {}",
                          in.limited_queue, s.running, Clock(s.ms), in.limit, holders));
  }
  const KeyLoad& ledger = loads.ledger.at(in.limited_queue);
  const KeyLoad& store = loads.store.at(in.limited_queue);
  int jobs = 0, limited_runs = 0;
  for (const auto& [id, q] : queue_of) jobs += q == in.limited_queue;
  for (const auto& [key, r] : runs) limited_runs += check.key_of_run(r) == in.limited_queue;
  const std::string stale =
      loads.stale_overlaps == 0
          ? std::string("no stale overlap")
          : fmt::format(
                "{} stale overlaps excused under 6 (over the limit only with runs the store "
                "had taken back; at most {} alive, the longest {} ms)",
                loads.stale_overlaps, loads.stale_overlap_peak, loads.stale_overlap_max_ms);
  inv.note = fmt::format(
      "{} jobs, {} runs: at most {} live runs at once (at the limit for {:.1f} s), {}; store: at "
      "most {} attempts open (at the limit for {:.1f} s); {} samples, at most {} running{}",
      jobs, limited_runs, ledger.peak_live, static_cast<double>(ledger.at_limit_ms) / 1000.0,
      stale, store.peak_live, static_cast<double>(store.at_limit_ms) / 1000.0,
      in.flow_samples.size(), sampled_max,
      in.flow_sample_failures > 0
          ? fmt::format(" ({} reads failed: store outages)", in.flow_sample_failures)
          : "");
  return inv;
}

}  // namespace

bool CheckResult::ok() const {
  return std::all_of(invariants.begin(), invariants.end(),
                     [](const Invariant& i) { return i.ok; });
}

CheckResult Check(const CheckInput& in) {
  CheckResult out;
  const std::vector<PlannedJob>& workload = *in.workload;
  const Timeline tl(in);
  std::map<int64_t, const JobInfo*> job_by_id;
  std::map<int64_t, int> index_of_job;  // job id -> workload index
  std::map<int, std::vector<int64_t>> jobs_of_index;
  for (const JobInfo& j : in.jobs) {
    job_by_id[j.id] = &j;
    const int n = j.payload.is_object() ? j.payload.value("n", -1) : -1;
    if (n >= 0 && n < static_cast<int>(workload.size())) {
      index_of_job[j.id] = n;
      jobs_of_index[n].push_back(j.id);
    }
    ++out.by_state[warden::JobStateName(j.state)];
    if (j.state == warden::JobState::kDead && j.last_error) {
      ++out.dead_by_kind[warden::ErrorKindName(*j.last_error)];
    }
  }
  const std::map<RunKey, Run> runs =
      BuildRuns(in.ledger, workload, index_of_job);
  out.runs = static_cast<int>(runs.size());
  std::map<int64_t, std::vector<const Run*>> runs_of_job;
  for (const auto& [key, r] : runs) runs_of_job[r.job].push_back(&r);

  // Invariants 1-3, the store's side of 4 and "every run an attempt" as
  // warden demo and the runtime simulation judge them (warden/invariants.h);
  // the notes, 4's ledger side, 5 and 6 are this runner's.
  warden::InvariantInput history;
  history.jobs = in.jobs;
  for (int64_t id : in.ids) {
    if (id != 0) history.acknowledged.push_back(id);
  }
  for (const auto& [key, r] : runs) {
    history.runs.push_back({r.job, r.attempt, r.token, r.worker, r.end == "ok"});
  }
  history.drained = true;  // an undrained run's unfinished jobs fail it too
  const std::vector<warden::InvariantResult> shared = warden::CheckInvariants(history);
  // The shared verdict `i` under this runner's name for it.
  auto verdict = [&](size_t i, const std::string& name) {
    Invariant inv(name);
    inv.violations = shared[i].violations;
    inv.ok = shared[i].ok();
    inv.evidence = shared[i].evidence;
    return inv;
  };

  // 1. None lost, none stuck.
  Invariant lost = verdict(0, "1. every job reached one terminal state: none lost, none stuck");
  int acknowledged = 0;
  for (size_t n = 0; n < workload.size(); ++n) acknowledged += in.ids[n] != 0;
  int duplicates = 0;
  for (const auto& [n, ids] : jobs_of_index)
    duplicates += static_cast<int>(ids.size()) - 1;
  lost.note = fmt::format(
      "{} of {} jobs acknowledged; drained: {}{}", acknowledged,
      workload.size(), in.drained ? "yes" : "NO",
      duplicates ? fmt::format("; {} stored twice (an enqueue retried after "
                               "an unknown commit outcome)",
                               duplicates)
                 : "");
  if (acknowledged < static_cast<int>(workload.size())) {
    lost.Flag(
        fmt::format("{} jobs were never acknowledged (the feeder gave up)",
                    workload.size() - static_cast<size_t>(acknowledged)));
  }
  out.invariants.push_back(lost);

  // 2. At most one committed completion, and it ran.
  Invariant once = verdict(
      1, "2. at most one committed completion per job, each a run that finished ok");
  int completions = 0;
  for (const JobInfo& j : in.jobs) {
    for (const AttemptInfo& a : j.attempts) completions += a.outcome == "succeeded";
  }
  once.note = fmt::format("{} completions committed", completions);
  out.invariants.push_back(once);

  // 3. At-most-once: started at most once.
  Invariant amo = verdict(2, "3. no at-most-once job started twice (ledger runs, start marks)");
  int amo_jobs = 0;
  for (const JobInfo& j : in.jobs) amo_jobs += j.delivery == warden::Delivery::kAtMostOnce;
  amo.note = fmt::format("{} at-most-once jobs", amo_jobs);
  out.invariants.push_back(amo);

  // 6 (before 4: key overlaps are judged with its excuses). Runs never
  // outlive their attempt, except as excused.
  Invariant stale{
      "6. no run started after its attempt ended, none outlived it (ledger "
      "activity after the store ended it)"};
  Invariant belongs = verdict(
      4, "+  every ledger run is a store attempt, run by the worker the store gave it to");
  std::set<RunKey> excused_runs;
  // Runs all of whose activity after their attempt ended was excused, with
  // that end: from there on they count apart under 7 (stale).
  std::map<RunKey, int64_t> stale_since;
  for (const auto& [key, r] : runs) {
    auto j = job_by_id.find(r.job);
    const AttemptInfo* a =
        j == job_by_id.end() ? nullptr : AttemptByToken(*j->second, r.token);
    // Not an attempt of the store (flagged under "+" above): no attempt to
    // judge its timing against. (One run by another incarnation than the
    // store gave it to, also flagged there, is judged below all the same.)
    if (a == nullptr || a->attempt != r.attempt) continue;
    if (!a->finished_at) continue;
    const int64_t ended = *a->finished_at;
    // A run must not *start* once its attempt is over: the stale-run margin
    // below is for runs that were already going when their worker froze.
    if (r.start > ended && tl.LateStartExcuse(r.worker, r.pid, r.start, ended).empty()) {
      ++out.late_starts;
      stale.Flag(
          fmt::format("job {}: run {} STARTED {} ms after the store ended its "
                      "attempt ({})",
                      r.job, DescribeRun(r, tl), r.start - ended,
                      DescribeAttempt(*a, tl)));
      continue;
    }
    bool excused = false, flagged = false;
    for (int64_t t : r.times) {
      if (t <= ended) continue;
      int64_t late = 0;
      const std::string why = tl.StaleExcuse(r.worker, t, &late);
      if (why.empty()) {
        flagged = true;
        stale.Flag(
            fmt::format(
                "job {}: run {} was active at {}, {} ms after the store ended "
                "its attempt ({}), with no freeze or death of its worker to "
                "explain it",
                r.job, DescribeRun(r, tl), Clock(t), t - ended,
                DescribeAttempt(*a, tl)));
        break;
      }
      excused = true;
      out.stale_late_max_ms = std::max(out.stale_late_max_ms, late);
      out.stale_after_end_max_ms =
          std::max(out.stale_after_end_max_ms, t - ended);
    }
    if (excused) excused_runs.insert(key);
    if (excused && !flagged) stale_since[key] = ended;
  }
  out.stale_runs = static_cast<int>(excused_runs.size());
  stale.note = fmt::format(
      "{} stale runs of frozen or killed workers, all stopped within "
      "--stale-margin {} of the "
      "thaw or death (latest {} ms after it, {} ms after the store ended the "
      "attempt)",
      out.stale_runs, warden::FormatDuration(in.options->stale_margin),
      out.stale_late_max_ms, out.stale_after_end_max_ms);
  belongs.note = fmt::format("{} runs in the ledger", runs.size());

  // 4. Concurrency keys: the store's intervals, then the ledger's.
  Invariant keys{
      "4. at most one running job per concurrency key (store attempts and "
      "ledger runs)"};
  std::set<std::string> key_names;
  std::map<std::string, std::vector<const Run*>> runs_by_key;
  for (const JobInfo& j : in.jobs) {
    if (j.concurrency_key.empty()) continue;
    key_names.insert(j.concurrency_key);
    for (const Run* r : runs_of_job[j.id])
      runs_by_key[j.concurrency_key].push_back(r);
  }
  {
    const warden::InvariantResult& store_side = shared[3];
    keys.violations += store_side.violations;
    keys.ok = keys.ok && store_side.ok();
    for (const std::string& e : store_side.evidence) keys.evidence.push_back("store: " + e);
  }
  for (auto& [key, list] : runs_by_key) {
    std::sort(list.begin(), list.end(),
              [](const Run* x, const Run* y) { return x->start < y->start; });
    for (size_t i = 0; i < list.size(); ++i) {
      for (size_t k = i + 1; k < list.size() && list[k]->start < list[i]->last;
           ++k) {
        if (excused_runs.count({list[i]->job, list[i]->token})) {
          ++out.key_overlaps_excused;
          continue;
        }
        keys.Flag(fmt::format(
                       "key {} (ledger): job {} run {} overlaps job {} run {}",
                       key, list[i]->job, DescribeRun(*list[i], tl),
                       list[k]->job, DescribeRun(*list[k], tl)));
      }
    }
  }
  keys.note =
      fmt::format("{} keys; {} ledger overlaps excused as stale runs (6)",
                  key_names.size(), out.key_overlaps_excused);
  out.invariants.push_back(keys);

  // 5. Recovery times.
  Invariant recovery{
      "5. killed / frozen / cut-off workers' jobs recovered within docs/design.md's "
      "bounds"};
  CheckRecoveryTimes(in, tl, &out.recovery, &recovery);
  out.invariants.push_back(recovery);
  out.invariants.push_back(stale);
  if (!in.limited_queue.empty()) {
    out.invariants.push_back(CheckLimit(in, tl, runs, stale_since, &out));
  }
  if (!in.node_limits.empty()) {
    out.invariants.push_back(CheckNodeCapacity(in, tl, runs, stale_since, &out));
  }
  if (in.nodes) out.invariants.push_back(CheckNodeFaults(in, tl));
  out.invariants.push_back(belongs);

  // Checkpoints: resumed only from a step an earlier attempt reached and
  // saved, never from an older one than the last committed.
  Invariant ckpt{
      "+  checkpoints never go backwards and come from earlier attempts"};
  int ckpt_jobs = 0;
  for (const auto& [id, list] : runs_of_job) {
    auto n = index_of_job.find(id);
    if (n == index_of_job.end()) continue;
    const JobPlan& plan = workload[static_cast<size_t>(n->second)].plan;
    if (plan.ckpt_every <= 0) continue;
    ++ckpt_jobs;
    std::vector<const Run*> by_attempt = list;
    std::sort(
        by_attempt.begin(), by_attempt.end(),
        [](const Run* x, const Run* y) { return x->attempt < y->attempt; });
    for (size_t k = 0; k < by_attempt.size(); ++k) {
      const Run& r = *by_attempt[k];
      bool reached = r.start_step == 0;
      int floor = 0;
      for (size_t i = 0; i < k; ++i) {
        const Run& e = *by_attempt[i];
        reached = reached || (r.start_step % plan.ckpt_every == 0 &&
                              std::count(e.ticks.begin(), e.ticks.end(),
                                         r.start_step) > 0);
        floor = std::max(floor, e.start_step);
        for (int c : e.committed_ckpts) floor = std::max(floor, c);
      }
      if (!reached || r.start_step < floor) {
        ckpt.Flag(fmt::format("job {}: {} resumed from step {} ({}; earlier "
                               "attempts committed "
                               "or resumed from step {})",
                               id, DescribeRun(r, tl), r.start_step,
                               reached ? "reached before"
                                       : "no earlier attempt reached it",
                               floor));
      }
    }
  }
  ckpt.note = fmt::format("{} checkpointing jobs", ckpt_jobs);
  out.invariants.push_back(ckpt);

  Invariant procs{
      "+  no worker process died on its own or ignored SIGTERM; no job "
      "outlived the workers"};
  for (const std::string& e : in.unexpected_exits) procs.Flag(e);
  for (const std::string& name : in.late_stoppers) {
    procs.Flag(name + " did not stop within 15 s of SIGTERM");
  }
  for (const ProcRecord& p : in.procs) {
    if (p.stopped_by_us && p.exit_code != 0) {
      procs.Flag(fmt::format(
                      "{} (pid {}) exited with status {} after SIGTERM; log {}",
                      p.name, p.pid, p.exit_code, p.log_path));
    }
  }
  for (const std::string& l : in.leftovers) {
    procs.Flag(l + " still ran 2 s after every worker had stopped");
  }
  procs.note = fmt::format("{} worker processes", in.procs.size());
  out.invariants.push_back(procs);
  return out;
}

}  // namespace chaos
