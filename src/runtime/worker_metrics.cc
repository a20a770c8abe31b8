// What a worker counts (core/metrics.h): attempts it finished, the jobs its
// sweeps recovered, waits, run times and recoveries; written into its
// worker row with its heartbeats, and served by its own /metrics.
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/retry.h"
#include "maintenance/recovery_metrics.h"
#include "runtime/worker_impl.h"

namespace warden {
namespace {

// The process's own figures from /proc/self, as Prometheus's client
// libraries export them.
void AddProcessMetrics(MetricSnapshot& out) {
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces), from field 3.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return;
  std::istringstream fields(text.substr(close + 2));
  std::vector<std::string> f;
  for (std::string v; fields >> v;) f.push_back(v);
  if (f.size() < 22) return;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  // utime, stime: fields 14, 15; starttime: 22; rss (pages): 24.
  out["process_cpu_seconds_total"] = (std::stod(f[11]) + std::stod(f[12])) / ticks;
  out["process_resident_memory_bytes"] = std::stod(f[21]) * page;
  std::ifstream uptime("/proc/uptime");
  double up = 0;
  uptime >> up;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const double boot = static_cast<double>(now.tv_sec) - up;
  out["process_start_time_seconds"] = boot + std::stod(f[19]) / ticks;
  std::error_code ec;
  int fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  out["process_open_fds"] = fds;
}

}  // namespace

Completer::Tally Worker::Impl::TallyFor(const RunningJob& r, const JobOutcome& o) const {
  Completer::Tally t;
  t.queue = r.job.queue;
  const int64_t started = r.started_mono;
  if (started != 0) t.run_seconds = static_cast<double>(clock_.MonotonicMs() - started) / 1000.0;
  if (o.success) {
    t.outcome = "succeeded";
  } else if (o.error.kind == ErrorKind::kReleased || o.error.kind == ErrorKind::kLost) {
    t.released = true;  // handed back, not ended: another worker runs it
  } else {
    const FailureDecision d = PredictFailure(r.job, o.error.kind, started != 0);
    t.outcome = OutcomeOf(d.next);
    t.quarantined = d.kind == ErrorKind::kCrashLoop;
  }
  return t;
}

void Worker::Impl::CountWritten(const Completer::Tally& t, bool accepted) {
  if (!accepted) return;  // fenced: the store logs it, and the rescue counted the attempt
  const MetricLabels queue = {{"queue", t.queue}};
  if (t.outcome) metrics_.Count(kJobsCompleted, {{"queue", t.queue}, {"outcome", t.outcome}});
  if (t.quarantined) metrics_.Count(kCrashLoopQuarantines, queue);
  if (t.released) metrics_.Count(kJobsRescued, {{"cause", "release"}});
  if (t.run_seconds >= 0) metrics_.Observe(kJobRun, queue, t.run_seconds);
}

void Worker::Impl::CountClaimed(const JobInfo& job) {
  // First claims only: a job rescued or retried without backoff keeps its
  // old run_at (its place in line), so its wait would count the attempts
  // before; warden_recovery_seconds measures a rescue. Both times are the
  // store's: the claim's and when the job became due.
  if (!job.started_at || job.attempt != 1) return;
  const double wait = static_cast<double>(std::max<TimeMs>(0, *job.started_at - job.run_at));
  metrics_.Observe(kJobWait, {{"queue", job.queue}}, wait / 1000.0);
}

void Worker::Impl::CountRecoveries(const std::vector<Recovery>& recoveries) {
  warden::CountRecoveries(metrics_, recoveries);
}

void Worker::Impl::FlushMetrics() {
  const uint64_t version = metrics_.version();
  if (version == flushed_version_) return;
  MetricSnapshot snapshot = metrics_.Snapshot();
  // What was counted before this registration stays with the rows it was
  // written to: a worker registered again writes only what came since.
  for (const auto& [series, value] : flush_base_) snapshot[series] -= value;
  if (heartbeat_store_->WorkerPutMetrics(id_, SnapshotToJson(snapshot)).ok()) {
    flushed_version_ = version;
  }
}

void Worker::Impl::RebaseMetrics() {
  flush_base_ = metrics_.Snapshot();
  flushed_version_ = metrics_.version();
}

std::string Worker::Impl::ExportMetrics() {
  MetricSnapshot out;
  // This process's share of the fleet's families, renamed (core/metrics.h).
  for (const auto& [series, value] : metrics_.Snapshot()) {
    out["warden_worker_" + series.substr(std::string_view("warden_").size())] = value;
  }
  int running = 0;
  {
    MutexLock lock(mu_);
    running = static_cast<int>(running_.size());
  }
  const HostFacts& host = env_.Host();
  out[MetricSeries("warden_worker_info", {{"worker", opt_.name},
                                          {"id", std::to_string(id_.load())},
                                          {"node", host.node},
                                          {"version", WARDEN_VERSION}})] = 1;
  out["warden_worker_slots"] = opt_.concurrency;
  out["warden_worker_running_jobs"] = running;
  out["warden_worker_maintenance_leader"] = leader_ ? 1 : 0;
  out["warden_worker_fenced_writes_total"] = static_cast<double>(counters_.fenced.load());
  AddProcessMetrics(out);
  return RenderMetrics(out);
}

Status Worker::Impl::Ready() const {
  if (id_ == 0) return Unavailable("not registered yet");
  if (stopping_) return Unavailable("draining");
  const int64_t last = last_heartbeat_ok_mono_;
  const int64_t quiet = clock_.MonotonicMs() - last;
  if (last == 0 || quiet > 3 * opt_.heartbeat.count() + 1000) {
    return Unavailable("no heartbeat written for " + std::to_string(quiet) + " ms");
  }
  return Status::Ok();
}

std::string Worker::ExportMetrics() { return impl_->ExportMetrics(); }
Status Worker::Impl::Live() const {
  const int64_t turned = watchdog_turned_mono_;
  // Not started yet (or waiting for the database: --start-timeout bounds
  // it), or its threads have ended (what is left is bounded by the goodbye's
  // own store timeouts).
  if (turned == 0 || threads_done_) return Status::Ok();
  // The loop turns every 50 ms; seconds without a turn is no scheduling
  // delay but a stuck process (its lock held for good, or starved).
  constexpr int64_t kStuckMs = 5000;
  const int64_t quiet = clock_.MonotonicMs() - turned;
  if (quiet > kStuckMs) {
    return Unavailable("stuck: the self-fencing watchdog has not run for " +
                       std::to_string(quiet) + " ms");
  }
  return Status::Ok();
}

Status Worker::Ready() const { return impl_->Ready(); }
Status Worker::Live() const { return impl_->Live(); }

}  // namespace warden
