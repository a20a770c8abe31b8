// /metrics: the Prometheus text format (version 0.0.4), read from the
// database at each scrape, so that any number of `warden serve` processes
// on one database report the same values. Names are the contract of
// docs/metrics.md and of the alert rules in deploy/prometheus/.
#include <fmt/core.h>

#include "server/api.h"

namespace warden::server {
namespace {

// A label value as the text format needs it: backslash, quote and line
// feed escaped (queue names come from whoever enqueues).
std::string LabelValue(const std::string& v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

class Exposition {
 public:
  void Family(const char* name, const char* type, const char* help) {
    text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void Sample(const char* name, const std::vector<std::pair<const char*, std::string>>& labels,
              double value) {
    text_ += name;
    if (!labels.empty()) {
      text_ += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        text_ += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first,
                             LabelValue(labels[i].second));
      }
      text_ += '}';
    }
    text_ += fmt::format(" {}\n", value);
  }
  std::string Take() { return std::move(text_); }

 private:
  std::string text_;
};

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

  Exposition e;
  e.Family("warden_jobs", "gauge", "Jobs by queue and state.");
  for (const QueueInfo& q : *queues) {
    for (JobState s : kStates) {
      e.Sample("warden_jobs", {{"queue", q.name}, {"state", JobStateName(s)}},
               static_cast<double>(q.CountIn(s)));
    }
  }
  e.Family("warden_queue_oldest_available_age_seconds", "gauge",
           "How long the queue's longest-waiting available job has waited (0: none).");
  for (const QueueInfo& q : *queues) {
    const double age = q.oldest_available_at
                           ? std::max<int64_t>(0, *now - *q.oldest_available_at) / 1000.0
                           : 0.0;
    e.Sample("warden_queue_oldest_available_age_seconds", {{"queue", q.name}}, age);
  }
  e.Family("warden_queue_paused", "gauge", "1 while the queue is paused.");
  for (const QueueInfo& q : *queues) {
    e.Sample("warden_queue_paused", {{"queue", q.name}}, q.paused ? 1 : 0);
  }
  e.Family("warden_queue_live_workers", "gauge", "Active workers that serve the queue.");
  for (const QueueInfo& q : *queues) {
    e.Sample("warden_queue_live_workers", {{"queue", q.name}}, q.live_workers);
  }
  e.Family("warden_workers", "gauge", "Worker rows by state.");
  for (WorkerState s : kWorkerStates) {
    int64_t n = 0;
    for (const auto& [state, count] : stats->workers) {
      if (state == WorkerStateName(s)) n = count;
    }
    e.Sample("warden_workers", {{"state", WorkerStateName(s)}}, static_cast<double>(n));
  }
  Response r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = e.Take();
  return r;
}

}  // namespace warden::server
