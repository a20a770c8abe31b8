// /metrics: the Prometheus text format (version 0.0.4), read from the
// database at each scrape, so that any number of `warden serve` processes
// on one database report the same values. Names are the contract of
// docs/metrics.md and of the alert rules in deploy/prometheus/. The
// counters and histograms are the fleet's totals (core/metrics.h).
#include <algorithm>

#include "core/metrics.h"
#include "server/api.h"

namespace warden::server {
namespace {

constexpr JobState kStates[] = {JobState::kScheduled, JobState::kAvailable, JobState::kRunning,
                                JobState::kSucceeded, JobState::kRetryable, JobState::kDead,
                                JobState::kCancelled, JobState::kExpired};
constexpr WorkerState kWorkerStates[] = {WorkerState::kActive, WorkerState::kDraining,
                                         WorkerState::kStopped, WorkerState::kDead};

}  // namespace

Response Api::Metrics(Client& c) {
  auto queues = c.ListQueues();
  if (!queues.has_value()) return ErrorResponse(queues.error());
  auto now = c.StoreNow();
  if (!now.has_value()) return ErrorResponse(now.error());
  auto stats = c.GetStats();
  if (!stats.has_value()) return ErrorResponse(stats.error());
  auto totals = c.MetricTotals();
  if (!totals.has_value()) return ErrorResponse(totals.error());
  auto leader = c.MaintenanceLeader();
  if (!leader.has_value()) return ErrorResponse(leader.error());

  MetricSnapshot m;
  for (const QueueInfo& q : *queues) {
    for (JobState s : kStates) {
      m[MetricSeries("warden_jobs", {{"queue", q.name}, {"state", JobStateName(s)}})] =
          static_cast<double>(q.CountIn(s));
    }
    const double age = q.oldest_available_at
                           ? std::max<int64_t>(0, *now - *q.oldest_available_at) / 1000.0
                           : 0.0;
    m[MetricSeries("warden_queue_oldest_available_age_seconds", {{"queue", q.name}})] = age;
    m[MetricSeries("warden_queue_paused", {{"queue", q.name}})] = q.paused ? 1 : 0;
    m[MetricSeries("warden_queue_live_workers", {{"queue", q.name}})] = q.live_workers;
  }
  for (WorkerState s : kWorkerStates) {
    int64_t n = 0;
    for (const auto& [state, count] : stats->workers) {
      if (state == WorkerStateName(s)) n = count;
    }
    m[MetricSeries("warden_workers", {{"state", WorkerStateName(s)}})] = static_cast<double>(n);
  }
  if (*leader) {
    m[MetricSeries("warden_maintenance_leader", {{"worker", (*leader)->name}})] = 1;
  }
  // Every counter whose labels are known starts at 0, so that increase()
  // sees its first event (docs/alerts.md).
  for (const QueueInfo& q : *queues) {
    for (const char* outcome : kOutcomes) {
      m[MetricSeries(kJobsCompleted, {{"queue", q.name}, {"outcome", outcome}})] = 0;
    }
    m[MetricSeries(kCrashLoopQuarantines, {{"queue", q.name}})] = 0;
  }
  for (const char* cause : kRescueCauses) m[MetricSeries(kJobsRescued, {{"cause", cause}})] = 0;
  m[kFencedWrites] = 0;
  m["warden_jobs_enqueued_total"] = 0;
  for (const auto& [series, value] : *totals) m[series] = value;

  Response r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = RenderMetrics(m);
  return r;
}

}  // namespace warden::server
