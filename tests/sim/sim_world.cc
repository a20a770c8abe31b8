// World: the run loop, the network's fates, faults and operator actions,
// and the ground truth of which handlers run (see sim_world.h).
#include "sim_world.h"

#include <algorithm>
#include <cstdlib>

#include "sim_worker.h"

namespace warden::sim {
namespace {
constexpr TimeMs kEpochMs = 1'700'000'000'000;
}

World::World(const RunOptions& options)
    : opt_(options),
      sc_(DrawScenario(options)),
      trace_(options.trace),
      rng_(Mix(options.seed, 0x4e7)),
      store_(options.mutation, options.seed, this),
      checker_(*this) {
  current_.assign(sc_.workers.size(), -1);
  pause_at_spawn_.assign(sc_.workers.size(), nullptr);
  partitions_.resize(sc_.workers.size());
  flaky_.resize(sc_.workers.size());
  for (const FaultPlan& f : sc_.faults) {
    if (f.kind == FaultKind::kPartition) partitions_[f.worker].push_back({f.at, f.at + f.duration});
    if (f.kind == FaultKind::kFlaky) flaky_[f.worker].push_back({f.at, f.at + f.duration});
  }
  // Overlapping cuts of one host are one cut, until the last of them heals.
  for (auto& windows : partitions_) {
    std::vector<std::pair<SimUs, SimUs>> merged;
    for (const auto& [from, to] : windows) {  // sorted: faults are
      if (!merged.empty() && from <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, to);
      } else {
        merged.push_back({from, to});
      }
    }
    windows = std::move(merged);
  }
  job_of_plan_.assign(sc_.jobs.size(), 0);
}

World::~World() = default;

TimeMs World::StoreNow() const { return kEpochMs + now_ / kUsPerMs + store_offset_ms_; }

void World::StepClock(const ClockStep& step) {
  store_offset_ms_ += step.by.count();
  steps_taken_.push_back(&step);
  ++stats_.clock_steps;
  store_changed_ = true;  // what waits for a moment may be due now, or later
  trace_.Line(now_, "CLOCK: the store's wall clock steps {} by {}ms (now {:+}ms off true time)",
              step.by.count() > 0 ? "forward" : "back", std::abs(step.by.count()),
              store_offset_ms_);
}

std::string World::ClockStepsSoFar() const {
  std::string s;
  for (const ClockStep* c : steps_taken_) {
    s += fmt::format("{}{:+}ms at {:.3f}s", s.empty() ? "" : ", ", c->by.count(),
                     static_cast<double>(c->at) / 1e6);
  }
  return s;
}

bool World::WaitsOnSteppedClock(const MemJob& j) const {
  const bool waiting = j.state == JobState::kScheduled || j.state == JobState::kRetryable;
  return waiting && j.run_at > StoreNow() && due_at_[j.id - 1] <= now_;
}

bool World::CutOff(const SimWorker& w) const { return InWindow(partitions_[w.plan()], now_); }

void World::Fail(std::string violation) {
  if (violation_) return;
  violation_ = std::move(violation);
  violation_at_ = now_;
  trace_.Line(now_, "VIOLATION: {}", *violation_);
}

bool World::InWindow(const std::vector<std::pair<SimUs, SimUs>>& windows, SimUs at,
                     std::pair<SimUs, SimUs>* window) const {
  for (const auto& w : windows) {
    if (at >= w.first && at < w.second) {
      if (window) *window = w;
      return true;
    }
  }
  return false;
}

World::Fate World::NetFate(const SimWorker& w, SimUs at, bool request) {
  const Timings& t = sc_.t;
  Fate f;
  std::pair<SimUs, SimUs> cut;
  if (InWindow(partitions_[w.plan()], at, &cut)) {
    // TCP retransmits: it arrives after the cut heals, if the caller waits.
    f.delay = cut.second - at + rng_.Range(0, FromMs(200));
    return f;
  }
  if (InWindow(flaky_[w.plan()], at)) {
    if (sc_.backend == Backend::kPostgres && rng_.Percent(20)) {
      f.lost = true;
      return f;
    }
    if (request && rng_.Percent(5)) {
      f.busy = true;  // conflict, or busy past a short timeout
      f.delay = rng_.Range(0, FromMs(50));
      return f;
    }
    // Slow: a lock held by another writer, a congested link.
    f.delay = rng_.Percent(50) ? rng_.Range(0, FromMs(2 * t.lease.count()))
                               : rng_.Range(0, FromMs(t.max_net_delay.count()));
    return f;
  }
  f.delay = rng_.Range(0, FromMs(t.max_net_delay.count()));
  return f;
}

bool World::Healthy(const SimWorker& w) const {
  if (!w.alive() || w.frozen() || !w.registered() || w.stopping()) return false;
  const MemWorker* row = store_.worker(w.id());
  if (!row || row->state != WorkerState::kActive || row->session_lost) return false;
  // A thread stuck in a call whose reply was lost waits for its timeout.
  const SimUs oldest = w.OldestCall();
  if (oldest >= 0 && now_ - oldest > FromMs(2 * sc_.t.max_net_delay.count() + 1)) return false;
  return !InWindow(partitions_[w.plan()], now_) && !InWindow(flaky_[w.plan()], now_);
}

SimWorker* World::ProcessOfWorkerId(WorkerId id) const {
  const MemWorker* row = store_.worker(id);
  return row ? procs_[row->process].get() : nullptr;
}

bool World::ProcessGone(int process) const {
  if (process < 0 || process >= static_cast<int>(procs_.size())) return false;
  return procs_[process]->dead() || procs_[process]->exited();
}

AttemptScript World::ScriptFor(JobId job, int attempt) const {
  const int plan = plan_of_job_[job - 1];
  const JobPlan& jp = sc_.jobs[plan];
  const uint64_t h = Mix(sc_.seed, static_cast<uint64_t>(plan) + 1, static_cast<uint64_t>(attempt));
  AttemptScript s;
  const int64_t span_us = (jp.max_run_ms - jp.min_run_ms) * kUsPerMs + 999;
  s.duration = FromMs(jp.min_run_ms) + static_cast<SimUs>(h % static_cast<uint64_t>(span_us + 1));
  s.checkpoint = jp.checkpoints;
  if (attempt <= jp.failing_attempts) {
    s.end = jp.fail_by_crash ? AttemptScript::End::kCrash : AttemptScript::End::kError;
  }
  return s;
}

int World::HandlerStarted(SimWorker& w, JobId job, int64_t token) {
  RunTruth run;
  run.job = job;
  run.token = token;
  run.process = w.process();
  const MemJob& j = store_.job(job);
  run.concurrency_key = j.concurrency_key;
  run.at_most_once = j.delivery == Delivery::kAtMostOnce;
  run.started = now_;
  // Started on a lease the store had already taken away.
  if (j.state != JobState::kRunning || j.lease_token != token) {
    auto it = taken_at_.find({job, token});
    run.superseded = it != taken_at_.end() ? it->second : now_;
  }
  runs_.push_back(run);
  trace_.Line(now_, "{}: job {} handler STARTS (token {})", w.info().name, job, token);
  checker_.HandlerStarted(runs_.back());
  return static_cast<int>(runs_.size()) - 1;
}

void World::HandlerStopRequested(int truth) {
  if (runs_[truth].stop_requested < 0) runs_[truth].stop_requested = now_;
}

void World::HandlerEnded(int truth) {
  RunTruth& run = runs_[truth];
  run.ended = now_;
  trace_.Line(now_, "{}: job {} handler ends (token {})", procs_[run.process]->info().name, run.job,
              run.token);
}

void World::NotifyWorkers() {
  for (const auto& p : procs_) {
    if (!p->alive()) continue;
    SimWorker* q = p.get();
    Post(now_ + rng_.Range(0, FromMs(sc_.t.max_net_delay.count())), q->process(),
         [q] { q->Wake(); });
  }
}

void World::WorkerRegistered(SimWorker& w) {
  trace_.Line(now_, "{}: registered as worker {}", w.info().name, w.id());
  // A new session: OpenSession(id, the worker's lease).
  if (session_lease_.size() <= static_cast<size_t>(w.process())) {
    session_lease_.resize(static_cast<size_t>(w.process()) + 1);
  }
  session_lease_[static_cast<size_t>(w.process())] = sc_.t.lease;
}

void World::SessionKeepAliveSet(int process, Millis lease) {
  Millis& at_server = session_lease_[static_cast<size_t>(process)];
  if (lease <= at_server) return;
  at_server = lease;
  trace_.Line(now_, "store: {}'s session keepalive now for a {}ms lease",
              procs_[static_cast<size_t>(process)]->info().name, lease.count());
}

void World::CountSelfFence(const SimWorker& w, JobId job, Millis lease) {
  ++stats_.self_fenced;
  checker_.SelfFenced(w, job, lease);
}

void World::OnAcceptedWrite(const char* what, const MemJob& job, int64_t named_token,
                            int64_t current_token) {
  trace_.Line(now_, "store: job {} {} accepted (token {}, current {})", job.id, what, named_token,
              current_token);
  checker_.AcceptedWrite(what, job.id, named_token, current_token);
}

void World::OnTakenAway(const MemJob& job, int64_t token, const char* why) {
  ++stats_.rescued;
  taken_at_[{job.id, token}] = now_;
  trace_.Line(now_, "store: job {} taken from token {} ({})", job.id, token, why);
  checker_.TakenAway(job, why);
  for (RunTruth& run : runs_) {
    if (run.job == job.id && run.token == token && run.superseded < 0) run.superseded = now_;
  }
}

void World::OnLeaseRenewed(const MemJob& job) {
  lease_written_[job.id - 1] = now_;
  lease_by_claim_[job.id - 1] = 0;
}

SimUs World::WorkerGoneAt(WorkerId id) const {
  auto it = worker_gone_at_.find(id);
  return it == worker_gone_at_.end() ? -1 : it->second;
}

void World::OnRunAtSet(const MemJob& job, Millis delay) {
  if (due_at_.size() < static_cast<size_t>(job.id)) due_at_.resize(job.id, 0);
  due_at_[job.id - 1] = now_ + FromMs(delay.count());
}

void World::OnClaimed(const MemJob& job) {
  lease_written_[job.id - 1] = now_;
  lease_by_claim_[job.id - 1] = 1;
  claimed_at_[job.id - 1] = now_;
  trace_.Line(now_, "store: job {} claimed by worker {} (token {}, attempt {})", job.id, job.worker,
              job.lease_token, job.attempt);
  for (RunTruth& run : runs_) {
    if (run.job == job.id && run.token < job.lease_token && run.superseded < 0) {
      run.superseded = now_;
    }
  }
}

void World::OnWorkerGone(const MemWorker& w) {
  trace_.Line(now_, "store: worker {} ({}) is {}{}", w.id, w.name, WorkerStateName(w.state),
              w.presumed_dead ? " (presumed: its heartbeat silent)" : "");
  worker_gone_at_.try_emplace(w.id, now_);
  checker_.WorkerGone(w);
}

bool World::AllJobsFinished() const {
  for (const MemJob& j : store_.jobs()) {
    if (!IsTerminal(j.state) && !WaitsOnSteppedClock(j)) return false;
  }
  return true;
}

void World::Dispatch(Event e) {
  if (e.owner != kWorldOwner) {
    const bool job = e.owner < kWorldOwner;
    SimWorker& p = *procs_[job ? ProcessOfJobsOwner(e.owner) : e.owner];
    if (!p.alive()) return;  // died with its process
    if (job ? p.jobs_frozen() : p.frozen()) {
      p.deferred().push_back(std::move(e));
      return;
    }
  }
  e.fn();
}

RunResult World::Run() {
  for (size_t i = 0; i < sc_.workers.size(); ++i) {
    Post(sc_.workers[i].start_at, kWorldOwner, [this, i] { StartProcess(static_cast<int>(i)); });
  }
  for (size_t i = 0; i < sc_.jobs.size(); ++i) {
    Post(sc_.jobs[i].enqueue_at, kWorldOwner, [this, i] { EnqueueJob(static_cast<int>(i)); });
  }
  for (const FaultPlan& f : sc_.faults) {
    Post(f.at, kWorldOwner, [this, &f] { ApplyFault(f); });
  }
  for (const OperatorPlan& op : sc_.ops) {
    Post(op.at, kWorldOwner, [this, &op] { ApplyOperator(op); });
  }
  for (const ClockStep& c : sc_.clock_steps) {
    Post(c.at, kWorldOwner, [this, &c] { StepClock(c); });
  }
  while (!q_.empty() && !violation_) {
    if (q_.next_at() > sc_.give_up_at) break;
    Event e = q_.Pop();
    now_ = std::max(now_, e.at);
    Dispatch(std::move(e));
    ++steps_;
    checker_.AfterStep();
    if (now_ >= sc_.faults_end && enqueued_ == static_cast<int>(sc_.jobs.size()) &&
        store_changed_) {
      store_changed_ = false;
      if (AllJobsFinished()) break;
    }
  }
  if (!violation_) checker_.AtEnd();
  for (const MemJob& j : store_.jobs()) stats_.waiting_on_clock += WaitsOnSteppedClock(j) ? 1 : 0;

  RunResult r = stats_;
  r.ok = !violation_.has_value();
  if (violation_) r.violation = *violation_;
  r.at = violation_at_;
  r.steps = steps_;
  r.sim_time = now_;
  r.trace = trace_.lines();
  r.scenario = sc_.Describe();
  return r;
}

}  // namespace warden::sim
