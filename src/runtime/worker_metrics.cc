// What a worker counts (core/metrics.h): attempts it finished, the jobs its
// sweeps recovered, waits, run times and recoveries; written into its
// worker row with its heartbeats, and served by its own /metrics.
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

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

Completer::Tally Worker::Impl::TallyFor(const std::shared_ptr<RunningJob>& run,
                                         const JobOutcome& o) const {
  const RunningJob& r = *run;
  Completer::Tally t;
  t.run = run;
  const int64_t started = r.started_mono;
  if (started != 0) t.run_ms = clock_.MonotonicMs() - started;
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

// Both count a batch (up to 512 jobs) per series, not per job: a series is
// a string built and looked up under the metrics' lock, and per job that
// was a measurable share of a no-op job's cost.
void Worker::Impl::CountWritten(std::span<const Completer::Tally> tallies,
                                const std::vector<bool>& accepted) {
  std::map<std::pair<std::string_view, std::string_view>, int> completed;  // queue, outcome
  std::map<std::string_view, int> quarantined;
  std::map<std::string_view, std::vector<double>> run_seconds;
  int released = 0;
  for (size_t i = 0; i < tallies.size() && i < accepted.size(); ++i) {
    if (!accepted[i]) continue;  // fenced: the store logs it, and the rescue counted the attempt
    const Completer::Tally& t = tallies[i];
    const std::string& queue = t.run->job.queue;
    if (t.outcome) ++completed[{queue, t.outcome}];
    if (t.quarantined) ++quarantined[queue];
    if (t.released) ++released;
    if (t.run_ms >= 0) run_seconds[queue].push_back(static_cast<double>(t.run_ms) / 1000.0);
  }
  for (const auto& [key, n] : completed) {
    metrics_.Count(kJobsCompleted,
                   {{"queue", std::string(key.first)}, {"outcome", std::string(key.second)}}, n);
  }
  for (const auto& [queue, n] : quarantined) {
    metrics_.Count(kCrashLoopQuarantines, {{"queue", std::string(queue)}}, n);
  }
  if (released > 0) metrics_.Count(kJobsRescued, {{"cause", "release"}}, released);
  for (const auto& [queue, seconds] : run_seconds) {
    metrics_.ObserveMany(kJobRun, {{"queue", std::string(queue)}}, seconds);
  }
}

void Worker::Impl::CountClaimed(const std::vector<JobInfo>& jobs) {
  // First claims only: a job rescued or retried without backoff keeps its
  // old run_at (its place in line), so its wait would count the attempts
  // before; warden_recovery_seconds measures a rescue. Both times are the
  // store's: the claim's and when the job became due.
  std::map<std::string_view, std::vector<double>> waits;
  for (const JobInfo& job : jobs) {
    if (!job.started_at || job.attempt != 1) continue;
    const TimeMs wait = std::max<TimeMs>(0, *job.started_at - job.run_at);
    waits[job.queue].push_back(static_cast<double>(wait) / 1000.0);
  }
  for (const auto& [queue, seconds] : waits) {
    metrics_.ObserveMany(kJobWait, {{"queue", std::string(queue)}}, seconds);
  }
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
  // Every counter and histogram whose labels it knows starts at 0 (its
  // queues, every outcome and cause), as serve's /metrics does: a new
  // panel has a line, and increase() sees the first event.
  MetricSnapshot counted;
  const std::vector<std::string> none;
  for (const std::string& queue : opt_.maintenance_only ? none : opt_.queues) {
    for (const char* outcome : kOutcomes) {
      counted[MetricSeries(kJobsCompleted, {{"queue", queue}, {"outcome", outcome}})] = 0;
    }
    counted[MetricSeries(kCrashLoopQuarantines, {{"queue", queue}})] = 0;
    AddZeroHistogram(counted, kJobWait, {{"queue", queue}});
    AddZeroHistogram(counted, kJobRun, {{"queue", queue}});
  }
  for (const char* cause : kRescueCauses) {
    counted[MetricSeries(kJobsRescued, {{"cause", cause}})] = 0;
    AddZeroHistogram(counted, kRecovery, {{"cause", cause}});
  }
  for (const auto& [series, value] : metrics_.Snapshot()) counted[series] = value;
  MetricSnapshot out;
  // This process's share of the fleet's families, renamed (core/metrics.h).
  for (const auto& [series, value] : counted) {
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
