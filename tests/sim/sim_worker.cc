// SimWorker: the process, its clock, start-up and graceful shutdown
// (runtime/worker.cc). The claim loop is in sim_claim_loop.cc, job
// execution in sim_executor.cc, the background loops in sim_worker_loops.cc.
#include "sim_worker.h"

#include <algorithm>

#include "core/lease.h"

namespace warden::sim {

SimWorker::SimWorker(World& world, int process, int plan, const WorkerPlan& info)
    : w_(world),
      process_(process),
      plan_(plan),
      info_(info),
      t_(world.scenario().t),
      anchor_true_(world.now()),
      // Every process's monotonic clock has an origin of its own.
      anchor_mono_us_(1'000'000'000 + static_cast<int64_t>(process) * 7'777'777) {}

// --- Clock ---

// CLOCK_BOOTTIME (SystemClock::MonotonicMs): it goes on while the process
// or its whole host is frozen or suspended.
int64_t SimWorker::MonoUs() const {
  const SimUs dt = w_.now() - anchor_true_;
  return anchor_mono_us_ + dt + dt * info_.drift_ppm / 1'000'000;
}

SimUs SimWorker::TrueWhenMono(int64_t mono_us) const {
  const int64_t d = mono_us - MonoUs();
  if (d <= 0) return w_.now();
  const int64_t rate = 1'000'000 + info_.drift_ppm;
  return w_.now() + (d * 1'000'000 + rate - 1) / rate;
}

void SimWorker::TimerAt(int64_t deadline, std::function<void()> fn) {
  w_.Post(TrueWhenMono(deadline), process_, std::move(fn));
}

void SimWorker::SleepMono(Millis d, std::function<void()> fn) {
  TimerAt(MonoUs() + d.count() * kUsPerMs, std::move(fn));
}

void SimWorker::Soon(std::function<void()> fn) { w_.Post(w_.now(), process_, std::move(fn)); }

bool SimWorker::ShouldFence(int64_t now_ms, int64_t base_ms, Millis lease) const {
  if (w_.options().mutation == Mutation::kFenceAtFullLease) {
    return Millis(now_ms - base_ms) >= lease;
  }
  return ShouldSelfFence(now_ms, base_ms, lease, t_.heartbeat);
}

int64_t SimWorker::LeaseProvenUntil(const SimRun& r) const {
  if (r.worker != id_) return 0;
  const Millis after = w_.options().mutation == Mutation::kFenceAtFullLease
                           ? r.lease
                           : SelfFenceAfter(r.lease, HeartbeatFor(r.lease, t_.heartbeat));
  return r.lease_base_mono() + after.count();
}

// --- Process control ---

void SimWorker::Freeze(bool with_jobs) {
  frozen_ = true;
  jobs_frozen_ = with_jobs;
  if (!with_jobs) return;
  for (auto& r : job_processes_) {
    if (!r->working) continue;
    r->work_left -= w_.now() - r->work_since;
    ++r->work_gen;
  }
}

void SimWorker::Thaw() {
  frozen_ = false;
  last_thaw_ = w_.now();
  if (!jobs_frozen_) return;
  jobs_frozen_ = false;
  for (auto& r : job_processes_) {
    if (!r->working) continue;
    r->work_since = w_.now();
    ScheduleWork(r);
  }
}

void SimWorker::Kill() {
  dead_ = true;
  // Its jobs' processes die with it (parent-death signal, supervisor gone).
  for (auto& r : job_processes_) {
    r->process_running = false;
    if (r->truth >= 0) w_.HandlerEnded(r->truth);
  }
  job_processes_.clear();
}

void SimWorker::Exit() {
  exited_ = true;
  w_.trace().Line(w_.now(), "{}: process {} exits", info_.name, process_);
}

void SimWorker::Terminate() {
  // Worker::Stop(false): stop claiming; the claim loop then shuts down.
  stopping_ = true;
  if (waiting_) {
    waiting_ = waiting_poll_ = false;
    ++wait_gen_;
    Soon([this] { ClaimStep(); });
  }
}

void SimWorker::Wake() { WakeClaimLoop(); }

uint64_t SimWorker::CallBegin() {
  calls_.push_back({++next_call_, w_.now()});
  return next_call_;
}

void SimWorker::CallEnd(uint64_t call) {
  std::erase_if(calls_, [call](const auto& c) { return c.first == call; });
}

SimUs SimWorker::OldestCall() const {
  SimUs oldest = -1;
  for (const auto& [id, sent] : calls_) {
    if (oldest < 0 || sent < oldest) oldest = sent;
  }
  return oldest;
}

bool SimWorker::Knows(JobId job, int64_t token) const {
  for (const auto& r : held_) {
    if (r->job.id == job && r->job.lease_token == token) return true;
  }
  for (const Pending& p : pending_) {
    if (p.outcome.ref.id == job && p.outcome.ref.lease_token == token) return true;
  }
  for (const Pending& p : in_flight_) {
    if (p.outcome.ref.id == job && p.outcome.ref.lease_token == token) return true;
  }
  return false;
}

// --- Start-up (Worker::Impl::Run) ---

void SimWorker::Start() {
  started_ = true;
  Recover();
}

void SimWorker::StartupFailed(const std::string& why) {
  w_.trace().Line(w_.now(), "{}: start-up failed ({}); exits", info_.name, why);
  Exit();
  // Its supervisor (systemd, RestartSec=1s) starts it again.
  w_.Post(w_.now() + FromMs(1000), kWorldOwner,
          [&w = w_, plan = plan_, process = process_] { w.RestartWhenGone(plan, process); });
}

// A previous incarnation under this name that never said goodbye is
// declared dead at once (it is on this host and its process is gone).
void SimWorker::Recover() {
  const std::string name = info_.name;
  w_.Call<std::vector<WorkerLiveness>>(
      *this, "list live",
      [name](MemStore& s, TimeMs) -> Result<std::vector<WorkerLiveness>> {
        return s.WorkerListLive(name);
      },
      [this](Result<std::vector<WorkerLiveness>> r) {
        if (!r.has_value()) return StartupFailed(r.error().ToString());
        RecoverNext(std::move(r).value(), 0, 0);
      });
}

void SimWorker::RecoverNext(std::vector<WorkerLiveness> same_name, size_t i, int tries) {
  if (i == same_name.size()) {
    return Register([this](bool ok) {
      if (!ok) return StartupFailed("could not register");
      StartThreads();
    });
  }
  const WorkerLiveness& old = same_name[i];
  const bool proof = old.node == std::to_string(info_.node) &&
                     old.pid_ns == std::to_string(info_.pid_ns) && w_.ProcessGone(old.pid);
  if (!proof) return StartupFailed("a live worker has this name");
  const WorkerId id = old.id;
  w_.Call<RescueReport>(
      *this, "declare dead",
      [id](MemStore& s, TimeMs now) -> Result<RescueReport> {
        return s.WorkerDeclareDead(id, "unexpected shutdown", now);
      },
      [this, same_name = std::move(same_name), i, tries](Result<RescueReport> r) mutable {
        if (!r.has_value()) {
          if (!r.error().transient() || tries >= 50) return StartupFailed(r.error().ToString());
          return SleepMono(Millis(100),
                           [this, same_name = std::move(same_name), i, tries]() mutable {
                             RecoverNext(std::move(same_name), i, tries + 1);
                           });
        }
        RecoverNext(std::move(same_name), i + 1, 0);
      });
}

void SimWorker::Register(std::function<void(bool)> then) {
  MemWorker row;
  row.name = info_.name;
  row.node = info_.node;
  row.pid_ns = info_.pid_ns;
  row.process = process_;
  w_.Call<WorkerId>(
      *this, "register",
      [row](MemStore& s, TimeMs now) -> Result<WorkerId> { return s.WorkerRegister(row, now); },
      [this, then = std::move(then)](Result<WorkerId> r) {
        if (!r.has_value()) return then(false);
        id_ = *r;
        // The session loop opens a session for it (OpenSession(id, lease)),
        // then asks for the longest lease it holds.
        session_lease_ = t_.lease;
        w_.WorkerRegistered(*this);
        SessionKeepAlive();
        then(true);
      });
}

void SimWorker::StartThreads() {
  watchdog_origin_us_ = MonoUs();
  Soon([this] { ClaimStep(); });
  Soon([this] { HeartbeatStep(); });
  Soon([this] { SweepStep(); });
}

// SessionLoop's KeepAliveFor(longest lease held, at least the worker's):
// a SET over the session connection, so the server does not end the
// session (a proof of death) while a job of a longer lease may still run
// unfenced. Never shortens; a failed SET is applied again on reconnecting.
void SimWorker::SessionKeepAlive() {
  if (w_.scenario().backend != Backend::kPostgres || session_setting_ || dead_ || exited_) return;
  Millis longest = t_.lease;
  for (const auto& [id, r] : running_) longest = std::max(longest, r->lease);
  if (longest <= session_lease_) return;
  session_lease_ = longest;
  session_setting_ = true;
  World* world = &w_;
  const int process = process_;
  const Millis lease = session_lease_;
  w_.Call<bool>(
      *this, "keepalive",
      [world, process, lease](MemStore&, TimeMs) -> Result<bool> {
        world->SessionKeepAliveSet(process, lease);
        return true;
      },
      [this, lease](Result<bool> set) {
        session_setting_ = false;
        if (!set.has_value()) {
          session_lease_ = std::min(session_lease_, lease - Millis(1));
          return SleepMono(Millis(20), [this] { SessionKeepAlive(); });
        }
        SessionKeepAlive();  // a longer one may have come meanwhile
      });
}

void SimWorker::StopAll(Stop why) {
  for (auto& [id, r] : running_) RequestStop(r, why);
}

// --- Graceful shutdown (Worker::Impl::Shutdown) ---

void SimWorker::Shutdown() {
  const WorkerId id = id_;
  w_.trace().Line(w_.now(), "{}: shutting down ({} running)", info_.name, running_.size());
  w_.Call<bool>(
      *this, "set draining",
      [id](MemStore& s, TimeMs) -> Result<bool> {
        s.WorkerSetDraining(id);
        return true;
      },
      [this](Result<bool>) { ShutdownWait(MonoMs() + t_.shutdown_timeout.count()); });
}

void SimWorker::ShutdownWait(int64_t deadline_ms) {
  if (!running_.empty() && MonoMs() < deadline_ms) {
    return SleepMono(Millis(20), [this, deadline_ms] { ShutdownWait(deadline_ms); });
  }
  ShutdownReleased();
}

void SimWorker::ShutdownReleased() {
  if (!running_.empty()) {
    StopAll(Stop::kShutdown);
    return SleepMono(Millis(20), [this] { ShutdownReleased(); });
  }
  // The completer flushes what is left, retrying until each outcome's
  // give-up time; then the loops end and the goodbye is written.
  completer_stop_ = true;
  CompleterKick();
  if (!pending_.empty() || !in_flight_.empty()) {
    return SleepMono(Millis(20), [this] { ShutdownReleased(); });
  }
  threads_done_ = true;
  const WorkerId id = id_;
  w_.Call<bool>(
      *this, "stop",
      [id](MemStore& s, TimeMs now) -> Result<bool> {
        s.WorkerStop(id, now);
        return true;
      },
      [this](Result<bool>) { Exit(); });
}

}  // namespace warden::sim
