// Worker: registration, slots and shutdown. The claim loop is in
// claim_loop.cc, the background loops in worker_loops.cc, job execution in
// executor.cc.
#include <algorithm>

#include "core/claim_ahead.h"
#include "core/held_bound.h"
#include "warden/client.h"
#include "warden/duration.h"
#include "warden/text.h"
#include "warden/plural.h"
#include "core/lease.h"
#include "env/subprocess.h"
#include "maintenance/recovery_metrics.h"
#include "maintenance/sweeper.h"
#include "runtime/worker_impl.h"
#include "runtime/worker_seams.h"
#include "store/server_url.h"

#ifndef WARDEN_VERSION
#define WARDEN_VERSION "dev"
#endif

namespace warden {

struct WorkerFactory {
  static std::unique_ptr<Worker> Make(std::unique_ptr<Worker::Impl> impl) {
    return std::unique_ptr<Worker>(new Worker(std::move(impl)));
  }
};

Status ValidateWorkerOptions(const WorkerOptions& options) {
  if (options.concurrency < 1) return InvalidArgument("concurrency must be at least 1");
  if (options.queues.empty()) return InvalidArgument("a worker needs at least one queue");
  // Shown in `warden workers`, the jobs it ran and the dashboard: the same
  // rules as a queue's name (no control or invisible characters).
  WARDEN_RETURN_IF_ERROR(ValidateName("worker name", options.name, /*required=*/false));
  for (const std::string& queue : options.queues) WARDEN_RETURN_IF_ERROR(ValidateQueueName(queue));
  // Self-fencing stops a job at SelfFenceAfter(lease): with fewer than three
  // heartbeats per lease, one slow heartbeat would stop healthy jobs.
  if (options.heartbeat.count() <= 0 || options.lease < options.heartbeat * 3) {
    return InvalidArgument("the lease (" + FormatDuration(options.lease) +
                           ") must be at least three heartbeat intervals (" +
                           FormatDuration(options.heartbeat) + ")");
  }
  if (options.sweep_interval.count() <= 0) {
    return InvalidArgument("sweep interval must be positive");
  }
  // Sweepers declare a worker dead once its heartbeat is this old: as with
  // the lease, one slow heartbeat must not do it.
  if (options.keepalive_threshold < options.heartbeat * 3) {
    return InvalidArgument("the keepalive threshold (" +
                           FormatDuration(options.keepalive_threshold) +
                           ") must be at least three heartbeat intervals (" +
                           FormatDuration(options.heartbeat) + ")");
  }
  if (!options.inventory_command.empty() && options.inventory_interval < Millis(1000)) {
    return InvalidArgument("the inventory interval must be at least 1s (it runs a command)");
  }
  if (options.poll_interval < Millis(10)) {
    return InvalidArgument("poll interval must be at least 10ms (it is the fallback when no "
                           "wake-up arrives; below that the worker busy-polls)");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Worker>> Worker::Create(const std::string& db_url,
                                               WorkerOptions options) {
  return CreateWorker(db_url, std::move(options), WorkerSeams{});
}

Result<std::unique_ptr<Worker>> CreateWorker(const std::string& db_url, WorkerOptions options,
                                             WorkerSeams seams) {
  Env& env = seams.env ? *seams.env : DefaultEnv();
  WARDEN_RETURN_IF_ERROR(ValidateWorkerOptions(options));
  if (options.name.empty()) {
    options.name = env.Host().node + "-" + std::to_string(env.Host().pid);
  }
  if (!options.node.empty()) WARDEN_RETURN_IF_ERROR(CheckNodeName(options.node).Annotate("node"));
  if (!NamesDatabaseServer(db_url)) options.start_timeout = Millis(0);  // store/server_url.h
  if (options.command_shim.empty() && (options.allow_commands || !options.task_commands.empty())) {
    options.command_shim = FindShimProgram();
  }
  Worker::Impl::OpenStoreFn open =
      seams.open_store ? seams.open_store : [db_url] { return OpenStore(db_url); };
  // Four connections: claims, heartbeats, sweeps and completions never wait
  // for each other inside this process. One try here, so that a database
  // warden must not use (damaged, too new, refused) fails Create; one that
  // cannot be reached for now is waited for by Run, where Stop ends the wait.
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < 4; ++i) {
    auto s = open();
    if (!s.has_value()) {
      if (!s.error().transient()) return s.error();
      break;
    }
    stores.push_back(std::move(s).value());
  }
  return WorkerFactory::Make(std::make_unique<Worker::Impl>(
      db_url, std::move(options), env, std::move(open), std::move(stores)));
}

Worker::Worker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Worker::~Worker() = default;

void Worker::Handle(const std::string& task, Handler handler) {
  impl_->handlers_[task] = std::move(handler);
}
Status Worker::Run() { return impl_->Run(); }
void Worker::Stop(bool release_now) { impl_->Stop(release_now); }
WorkerId Worker::id() const { return impl_->id_.load(); }
const std::string& Worker::name() const { return impl_->opt_.name; }
const WorkerCounters& Worker::counters() const { return impl_->counters_; }

Worker::Impl::Impl(std::string url, WorkerOptions options, Env& env, OpenStoreFn open_store,
                   std::vector<std::unique_ptr<Store>> stores)
    : url_(std::move(url)),
      opt_(std::move(options)),
      env_(env),
      clock_(env.clock()),
      open_store_(std::move(open_store)) {
  std::unique_ptr<Store>* slots[] = {&claim_store_, &heartbeat_store_, &sweep_store_,
                                     &finish_store_};
  for (size_t i = 0; i < stores.size() && i < std::size(slots); ++i) {
    *slots[i] = std::move(stores[i]);
  }
  if (opt_.log_record) {
    log_ = opt_.log_record;
  } else if (opt_.log) {
    log_ = [log = opt_.log](const LogRecord& r) { log(r.message); };
  } else {
    log_ = StderrLog(opt_.log_format, opt_.name, [this] { return id_.load(); });
  }
  // Without them (-1) the loops still run, woken by their poll timeouts.
  wake_fd_ = env_.NewWakeFd();
  stop_fd_ = env_.NewWakeFd();
  longer_lease_fd_ = env_.NewWakeFd();
}

Worker::Impl::~Impl() {
  env_.CloseFd(wake_fd_);
  env_.CloseFd(stop_fd_);
  env_.CloseFd(longer_lease_fd_);
}

Status Worker::Impl::RecoverPreviousIncarnation() {
  WARDEN_ASSIGN_OR_RETURN(auto same_name, claim_store_->WorkerListLive(opt_.name));
  const HostFacts& me = env_.Host();
  for (const WorkerLiveness& w : same_name) {
    std::string proof = ProofOfDeath(w, env_);
    // A start-up retry after a registration that committed but whose reply
    // was lost finds this very process's row: not a rival, and holding no job.
    if (w.boot_id == me.boot_id && w.pid_ns == me.pid_ns && w.pid == me.pid &&
        w.pid_start == me.pid_start) {
      proof = "an earlier start-up attempt of this process whose reply was lost";
    }
    if (proof.empty() && w.session_lost) {
      WARDEN_ASSIGN_OR_RETURN(auto lost,
                              ConfirmSessionsLost(*claim_store_, clock_, {w}, opt_.name));
      if (!lost.empty()) proof = kSessionLostProof;
    }
    if (proof.empty()) {
      return FailedPrecondition("a worker named '" + opt_.name + "' is already running (pid " +
                                std::to_string(w.pid) + " on " + w.host +
                                "); stop it, pick another --name, or run `warden workers "
                                "release " + opt_.name + "` if that host is gone");
    }
    const int64_t found_mono = clock_.MonotonicMs();
    WARDEN_ASSIGN_OR_RETURN(
        RescueReport r,
        DeclareDeadPatiently(*claim_store_, clock_, w.id, "unexpected shutdown: " + proof,
                             LossCause::kProvenDeath, nullptr));
    CountRecoveries(
        RecoveriesOf(r, "proven_death", Millis(clock_.MonotonicMs() - found_mono)));
    Log(LogLevel::kWarn, "unexpected shutdown of the previous '" + opt_.name + "' (worker " +
         std::to_string(w.id) + ", " + proof + "); recovered " + std::to_string(r.rescued) +
         " of its jobs");
  }
  return Status::Ok();
}

std::vector<std::string> Worker::Impl::Tasks() const {
  std::vector<std::string> tasks;
  for (const auto& [task, handler] : handlers_) tasks.push_back(task);
  for (const auto& [task, command] : opt_.task_commands) tasks.push_back(task);
  return tasks;
}

std::string Worker::Impl::Serves() const {
  if (opt_.maintenance_only) return "maintenance only (claims nothing)";
  auto list = [](const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + OneLine(n, 60);
    return out;
  };
  const std::vector<std::string> tasks = Tasks();
  std::string out = (opt_.queues.size() == 1 ? "queue " : "queues ") + list(opt_.queues) + "; ";
  if (!tasks.empty()) out += (tasks.size() == 1 ? "task " : "tasks ") + list(tasks);
  if (opt_.allow_commands) out += std::string(tasks.empty() ? "" : " and ") + "command jobs";
  else out += tasks.empty() ? "" : " (not command jobs: no --allow-cmd)";
  return out;
}

Status Worker::Impl::Register() {
  WorkerRegistration reg;
  reg.name = opt_.name;
  const HostFacts& host = env_.Host();
  reg.node = opt_.node.empty() ? host.node : opt_.node;
  reg.host = host.node;
  reg.boot_id = host.boot_id;
  reg.pid_ns = host.pid_ns;
  reg.pid = host.pid;
  reg.pid_start = host.pid_start;
  reg.version = WARDEN_VERSION;
  if (opt_.maintenance_only) {
    reg.concurrency = 0;  // no queue, task or command: it serves no work
  } else {
    reg.queues = opt_.queues;
    reg.tasks = Tasks();
    reg.concurrency = opt_.concurrency;
    reg.allow_commands = opt_.allow_commands;
  }
  reg.keepalive = opt_.keepalive_threshold;
  WARDEN_ASSIGN_OR_RETURN(WorkerId id, heartbeat_store_->WorkerRegister(reg));
  id_ = id;
  return Status::Ok();
}

Status Worker::Impl::StartOnce() {
  for (std::unique_ptr<Store>* slot :
       {&claim_store_, &heartbeat_store_, &sweep_store_, &finish_store_}) {
    if (*slot) continue;
    WARDEN_ASSIGN_OR_RETURN(*slot, open_store_());
  }
  WARDEN_RETURN_IF_ERROR(RecoverPreviousIncarnation());
  return Register();
}

Status Worker::Impl::Start() {
  // A worker (re)started while its database server restarts or fails over
  // would otherwise exit at once, and a fleet restarted together with its
  // database would need a supervisor's retries to come back.
  const int64_t deadline = clock_.MonotonicMs() + opt_.start_timeout.count();
  Millis backoff(100);
  bool waiting = false;
  while (true) {
    if (stopping_) {
      Log(LogLevel::kInfo, "stopped before it could start");
      return Status::Ok();
    }
    Status s = StartOnce();
    if (s.ok()) {
      if (waiting) Log(LogLevel::kInfo, "the database answers again");
      return s;
    }
    const int64_t now = clock_.MonotonicMs();
    if (!s.transient() || now >= deadline) {
      if (!waiting || !s.transient()) return s;
      return Status(s.code(), s.message() + " (still, after retrying for " +
                                  FormatDuration(opt_.start_timeout) + "; --start-timeout)");
    }
    if (!waiting) {
      Log(LogLevel::kWarn, "cannot start yet, retrying for up to " +
                               FormatDuration(opt_.start_timeout) + ": " + s.message());
      Tell(WorkerPhase::kWaiting, "waiting up to " + FormatDuration(opt_.start_timeout) +
                                      " for the database: " + OneLine(s.message(), 200));
    }
    waiting = true;
    {
      UniqueMutexLock lock(mu_);
      sleep_cv_.WaitFor(lock, std::min(backoff, Millis(deadline - now)),
                        [&] { return stopping_.load(); });
    }
    backoff = std::min(backoff * 2, Millis(2000));
  }
}

Status Worker::Impl::Run() {
  if (!opt_.maintenance_only && handlers_.empty() && opt_.task_commands.empty() &&
      !opt_.allow_commands) {
    return InvalidArgument(
        "this worker can run nothing: register a handler (Worker::Handle), or set "
        "WorkerOptions::task_commands or allow_commands");
  }
  WARDEN_RETURN_IF_ERROR(Start());
  if (id_ == 0) return Status::Ok();  // stopped while waiting for the database
  const int slots = opt_.maintenance_only ? 0 : opt_.concurrency;
  Log(LogLevel::kInfo, "started as worker " + std::to_string(id_.load()) + ": " + Serves() +
                           ", concurrency " + std::to_string(slots));

  Completer::Callbacks cb;
  cb.worker_id = [this] { return id_.load(); };
  cb.log = [this](JobId job, const std::string& line) { Log(LogLevel::kWarn, line, job); };
  cb.on_written = [this](std::span<const Completer::Tally> t, const std::vector<bool>& accepted) {
    CountWritten(t, accepted);
    LogWritten(t, accepted);
  };
  cb.on_batch = [this](int accepted, int fenced, bool freed_keys) {
    counters_.fenced += fenced;
    (void)accepted;
    if (freed_keys) finish_store_->NotifyWorkers();
    // Committed outcomes free the claim loop's allowance for unsettled ones
    // (ClaimLoop); it marks itself asleep before it counts them.
    if (claim_loop_asleep_) WakeClaimLoop();
  };
  completer_ = std::make_unique<Completer>(*finish_store_, env_, opt_.flush_window, cb);

  for (int i = 0; i < slots; ++i) {
    threads_.push_back(env_.StartThread([this] { SlotLoop(); }));
  }
  threads_.push_back(env_.StartThread([this] { HeartbeatLoop(); }));
  threads_.push_back(env_.StartThread([this] { WatchdogLoop(); }));
  threads_.push_back(env_.StartThread([this] { SweeperLoop(); }));
  threads_.push_back(env_.StartThread([this] { SessionLoop(); }));
  if (!opt_.inventory_command.empty()) {
    threads_.push_back(env_.StartThread([this] { InventoryLoop(); }));
  }

  // Registered, its threads running, and the claim loop about to claim:
  // from here on it runs what is enqueued.
  Tell(WorkerPhase::kReady, "worker " + std::to_string(id_.load()) + " (" + opt_.name +
                                "): " + Serves() + ", concurrency " +
                                std::to_string(slots));
  if (opt_.maintenance_only) {
    // Its loops (heartbeat, sweeper, session) do the work, until Stop().
    UniqueMutexLock lock(mu_);
    while (!stopping_) sleep_cv_.WaitFor(lock, Millis(1000), [&] { return stopping_.load(); });
  } else {
    ClaimLoop();
  }
  Shutdown();
  return fatal_;
}

size_t Worker::Impl::Inflight() {
  MutexLock lock(mu_);
  return running_.size();
}

void Worker::Impl::WakeClaimLoop() { env_.SignalWakeFd(wake_fd_); }

void Worker::Impl::SleepFor(Millis d) {
  UniqueMutexLock lock(mu_);
  sleep_cv_.WaitFor(lock, d, [&] { return threads_done_.load(); });
}

bool Worker::Impl::Retrying(const Status& s, int64_t deadline_mono, Millis* backoff) {
  if (!s.transient() || clock_.MonotonicMs() >= deadline_mono || threads_done_) return false;
  SleepFor(*backoff);
  *backoff = std::min(*backoff * 2, Millis(1000));
  return true;
}

void Worker::Impl::WakeSlotsLocked() {
  // Short jobs are best run by the slots already awake, one after another:
  // a thread woken per job costs two context switches, more than the job.
  // Long jobs still spread over the slots: each woken slot that leaves jobs
  // queued wakes the next, so a burst starts within a few wake-ups per
  // job (microseconds each) of its claim.
  constexpr int kWakingAtOnce = 2;
  while (slot_wakes_ < kWakingAtOnce && slot_wakes_ < idle_slots_ &&
         static_cast<size_t>(slot_wakes_) < queue_.size()) {
    ++slot_wakes_;
    slot_cv_.NotifyOne();
  }
}

void Worker::Impl::SlotLoop() {
  while (true) {
    std::shared_ptr<RunningJob> r;
    {
      UniqueMutexLock lock(mu_);
      if (queue_.empty()) {
        ++idle_slots_;
        slot_cv_.Wait(lock, [&]() REQUIRES(mu_) { return slots_exit_ || slot_wakes_ > 0; });
        --idle_slots_;
        if (slot_wakes_ > 0) --slot_wakes_;
      }
      if (queue_.empty()) {
        if (slots_exit_) return;
        continue;  // a slot already awake took it
      }
      r = std::move(queue_.front());
      queue_.pop_front();
      WakeSlotsLocked();
    }
    // A job claimed but not started when shutdown began goes straight back.
    if (stopping_) r->stop.Request(StopReason::kShutdown);
    const int64_t taken_us = clock_.MonotonicUs();
    JobOutcome outcome = Execute(*r);
    const double job_us = static_cast<double>(clock_.MonotonicUs() - taken_us);
    r->finished = true;
    (outcome.success ? counters_.succeeded : counters_.failed)++;
    Completer::Tally tally = TallyFor(r, outcome);
    LogOutcome(*r, outcome, tally);
    completer_->Add(std::move(outcome), r->lease, !r->job.concurrency_key.empty(),
                    std::move(tally));
    {
      MutexLock lock(mu_);
      // A later attempt of the same job may have been claimed while this
      // one was being stopped: remove only our own entry.
      auto it = running_.find(r->job.id);
      if (it != running_.end() && it->second == r) running_.erase(it);
      // Only jobs that ran: one handed back unstarted says nothing of how
      // long jobs take.
      if (r->started_mono != 0) job_us_avg_ = Smooth(job_us_avg_, job_us);
    }
    // After the erase above: the claim loop marks itself asleep before it
    // counts the held jobs (ClaimLoop), so it sees the freed slot or this
    // sees it asleep.
    if (claim_loop_asleep_) WakeClaimLoop();
  }
}

void Worker::Impl::StopAll(StopReason why, const std::string& log_line) {
  MutexLock lock(mu_);
  if (!running_.empty() && !log_line.empty()) Log(LogLevel::kInfo, log_line);
  for (auto& [id, r] : running_) r->stop.Request(why);
}

void Worker::Impl::Tell(WorkerPhase phase, const std::string& detail) {
  if (phase == WorkerPhase::kStopping && told_stopping_.exchange(true)) return;
  if (phase == WorkerPhase::kReady && told_stopping_) return;  // stopped while starting
  if (opt_.on_phase) opt_.on_phase(phase, detail);
}

void Worker::Impl::Stop(bool release_now) {
  Tell(WorkerPhase::kStopping, "stopping: no more claims; draining the running jobs");
  if (stopping_.exchange(true) || release_now) release_now_ = true;
  sleep_cv_.NotifyAll();
  WakeClaimLoop();
}

void Worker::Impl::Shutdown() {
  Tell(WorkerPhase::kStopping, "stopping: no more claims; draining the running jobs");
  const WorkerId id = id_;
  if (Status s = claim_store_->WorkerSetDraining(id); !s.ok()) {
    Log(LogLevel::kWarn, "could not mark draining: " + s.ToString());
  }
  const size_t n = Inflight();
  if (n > 0 && !release_now_) {
    Log(LogLevel::kInfo, "draining: waiting up to " + FormatDuration(opt_.shutdown_timeout) +
                             " for " + Plural(static_cast<int64_t>(n), "running job"));
  }
  const int64_t deadline = clock_.MonotonicMs() + opt_.shutdown_timeout.count();
  while (Inflight() > 0 && !release_now_ && clock_.MonotonicMs() < deadline) {
    UniqueMutexLock lock(mu_);
    sleep_cv_.WaitFor(lock, Millis(20));
  }
  StopAll(StopReason::kShutdown, "releasing the jobs still running");
  {
    UniqueMutexLock lock(mu_);
    slots_exit_ = true;
  }
  slot_cv_.NotifyAll();
  // Slots end once the queue is empty and their jobs are stopped.
  while (Inflight() > 0) {
    StopAll(StopReason::kShutdown, "");
    UniqueMutexLock lock(mu_);
    sleep_cv_.WaitFor(lock, Millis(20));
  }
  completer_->Stop();
  {
    MutexLock lock(mu_);  // so no SleepFor misses the wake-up
    threads_done_ = true;
  }
  sleep_cv_.NotifyAll();
  heartbeat_cv_.NotifyAll();
  env_.SignalWakeFd(stop_fd_);
  inventory_stop_.Request(StopReason::kShutdown);
  for (auto& t : threads_) t->Join();
  threads_.clear();
  FlushMetrics();  // what the last jobs and the drain counted
  if (Status s = heartbeat_store_->WorkerStop(id_); !s.ok()) {
    Log(LogLevel::kWarn, "could not record the stop: " + s.ToString());
  }
  session_.reset();  // only now: stopped, so its closing proves nothing
  Log(LogLevel::kInfo, "stopped: " + std::to_string(counters_.succeeded.load()) + " succeeded, " +
       std::to_string(counters_.failed.load()) + " failed, " +
       std::to_string(counters_.fenced.load()) + " fenced off");
}

}  // namespace warden
