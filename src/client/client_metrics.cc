// Client::ExportMetrics: `warden serve`'s /metrics (docs/metrics.md), read
// from the database at each call, so that any number of `warden serve`
// processes on one database report the same values. Names are the
// contract of docs/metrics.md and of the alert rules in deploy/prometheus/.
// The counters and histograms are the fleet's totals (core/metrics.h).
#include <algorithm>

#include "client/workers_shown.h"
#include "core/metrics.h"
#include "maintenance/maintainer.h"
#include "store/store.h"
#include "warden/client.h"

namespace warden {
namespace {

constexpr JobState kStates[] = {JobState::kScheduled, JobState::kAvailable, JobState::kRunning,
                                JobState::kSucceeded, JobState::kRetryable, JobState::kDead,
                                JobState::kCancelled, JobState::kExpired};
constexpr char kSilentState[] = "silent";
constexpr WorkerState kWorkerStates[] = {WorkerState::kActive, WorkerState::kDraining,
                                         WorkerState::kStopped, WorkerState::kDead};

}  // namespace

Result<std::string> Client::ExportMetrics() {
  WARDEN_ASSIGN_OR_RETURN(auto queues, ListQueues());
  WARDEN_ASSIGN_OR_RETURN(auto now, StoreNow());
  // Every worker row, for the states and the leader's name (GetStats would
  // also count every job, once more than ListQueues does), silent ones
  // marked (warden/worker_silence.h).
  WARDEN_ASSIGN_OR_RETURN(ShownWorkers shown, ReadShownWorkers(*store_, /*live_only=*/false));
  const std::vector<WorkerInfo>& workers = shown.workers;
  WARDEN_ASSIGN_OR_RETURN(auto totals, MetricTotals());
  WARDEN_ASSIGN_OR_RETURN(auto leader, store_->LeaderRead(kMaintenanceRole));
  WARDEN_ASSIGN_OR_RETURN(auto unserved, Unserved());

  MetricSnapshot m;
  for (const QueueInfo& q : queues) {
    for (JobState s : kStates) {
      m[MetricSeries("warden_jobs", {{"queue", q.name}, {"state", JobStateName(s)}})] =
          static_cast<double>(q.CountIn(s));
    }
    const double age = q.oldest_available_at
                           ? std::max<int64_t>(0, now - *q.oldest_available_at) / 1000.0
                           : 0.0;
    m[MetricSeries("warden_queue_oldest_available_age_seconds", {{"queue", q.name}})] = age;
    m[MetricSeries("warden_queue_paused", {{"queue", q.name}})] = q.paused ? 1 : 0;
    m[MetricSeries("warden_queue_live_workers", {{"queue", q.name}})] = q.live_workers;
    m[MetricSeries("warden_queue_unserved_jobs", {{"queue", q.name}})] = 0;
  }
  // Waiting jobs no live worker can run (`warden stats` names their tasks):
  // by queue alone, so that the series are as many as the queues.
  for (const BacklogGroup& g : unserved) {
    m[MetricSeries("warden_queue_unserved_jobs", {{"queue", g.queue}})] +=
        static_cast<double>(g.count);
  }
  // A live worker whose heartbeat went unrenewed past its keepalive is
  // counted as `silent`, not by its row's state: until recovery marks it
  // dead, its row still says active (or draining).
  std::map<std::string, int64_t> by_state;
  for (WorkerState s : kWorkerStates) by_state[WorkerStateName(s)] = 0;
  by_state[kSilentState] = 0;
  for (const WorkerInfo& w : workers) {
    if (w.MaintenanceOnly()) continue;  // `warden serve`'s row: no worker
    ++by_state[w.silent_for ? kSilentState : WorkerStateName(w.state)];
  }
  for (const auto& [state, n] : by_state) {
    m[MetricSeries("warden_workers", {{"state", state}})] = static_cast<double>(n);
  }
  if (leader && leader->holder_live) {
    for (const WorkerInfo& w : workers) {
      // A silent leader is left out: a fleet led by it has no maintenance.
      if (w.id == leader->holder && !w.silent_for) {
        m[MetricSeries("warden_maintenance_leader", {{"worker", w.name}})] = 1;
      }
    }
  }
  // Every counter and histogram whose labels are known starts at 0, so that
  // increase() sees its first event (docs/alerts.md) and a new dashboard
  // panel has a line, not "No data".
  for (const QueueInfo& q : queues) {
    for (const char* outcome : kOutcomes) {
      m[MetricSeries(kJobsCompleted, {{"queue", q.name}, {"outcome", outcome}})] = 0;
    }
    m[MetricSeries(kCrashLoopQuarantines, {{"queue", q.name}})] = 0;
    AddZeroHistogram(m, kJobWait, {{"queue", q.name}});
    AddZeroHistogram(m, kJobRun, {{"queue", q.name}});
  }
  for (const char* cause : kRescueCauses) {
    m[MetricSeries(kJobsRescued, {{"cause", cause}})] = 0;
    AddZeroHistogram(m, kRecovery, {{"cause", cause}});
  }
  m[kFencedWrites] = 0;
  m["warden_jobs_enqueued_total"] = 0;
  for (const auto& [series, value] : totals) m[series] = value;

  return RenderMetrics(m);
}

}  // namespace warden
