#include "core/metrics.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <set>

#include "warden/job.h"

namespace warden {
namespace {

// Job waits and runs go from milliseconds to hours; recoveries from a
// millisecond (a proven death) to a lease or two.
const std::vector<double> kJobSecondsBuckets = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                0.5,   1,     2.5,  5,     10,   30,  60,
                                                300,   900,   3600};
const std::vector<double> kRecoveryBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                              0.25,  0.5,    1,     2.5,  5,     10,   30,
                                              60,    300};

const std::vector<MetricFamily> kJobPathFamilies = {
    {kJobsCompleted, MetricType::kCounter,
     "Attempts that ended, by queue and by what they meant for the job: succeeded, failed "
     "(it will be retried), dead (it will not), cancelled."},
    {kJobsRescued, MetricType::kCounter,
     "Running jobs recovered from a worker that lost them, by cause: proven_death, "
     "lease_expiry, release (its worker's graceful shutdown), operator."},
    {kCrashLoopQuarantines, MetricType::kCounter,
     "Jobs made dead as crash_loop: they crashed, or their worker died under them, "
     "--max-crashes times."},
    {kJobWait, MetricType::kHistogram,
     "From when a job could first run (enqueued, or its scheduled time) to its first claim, "
     "by queue.",
     &kJobSecondsBuckets},
    {kJobRun, MetricType::kHistogram, "How long attempts ran, by queue.", &kJobSecondsBuckets},
    {kRecovery, MetricType::kHistogram,
     "From a fault being found (a death proven, a lease judged silent) to its jobs being "
     "runnable again, by cause.",
     &kRecoveryBuckets},
};

const std::vector<MetricFamily> kStoreFamilies = {
    {"warden_jobs", MetricType::kGauge, "Jobs by queue and state."},
    {"warden_queue_oldest_available_age_seconds", MetricType::kGauge,
     "How long the queue's longest-waiting available job has waited (0: none)."},
    {"warden_queue_paused", MetricType::kGauge, "1 while the queue is paused."},
    {"warden_queue_live_workers", MetricType::kGauge,
     "Active workers that serve the queue, not silent and on a node that takes work."},
    {"warden_queue_unserved_jobs", MetricType::kGauge,
     "Waiting jobs of the queue that no live worker can run: none serves their task (or "
     "runs command jobs), or none serves the queue."},
    {"warden_workers", MetricType::kGauge,
     "Worker rows by state; a live one whose heartbeat is older than its keepalive: silent."},
    {"warden_maintenance_leader", MetricType::kGauge,
     "1 for the worker that holds the maintenance lease (none: no series, or it is silent)."},
    {"warden_jobs_enqueued_total", MetricType::kCounter,
     "Jobs ever inserted into this database (unique-key duplicates not counted)."},
    {kFencedWrites, MetricType::kCounter,
     "Writes refused because the worker no longer held the job's lease."},
};

const std::vector<MetricFamily> kWorkerFamilies = {
    {"warden_worker_slots", MetricType::kGauge, "This worker's --concurrency."},
    {"warden_worker_running_jobs", MetricType::kGauge, "Jobs this worker holds now."},
    {"warden_worker_maintenance_leader", MetricType::kGauge,
     "1 while this worker holds the maintenance lease."},
    {"warden_worker_info", MetricType::kGauge, "1, labelled with this worker's identity."},
    {"warden_worker_fenced_writes_total", MetricType::kCounter,
     "Outcomes of this worker refused because it no longer held the job's lease."},
    {"process_resident_memory_bytes", MetricType::kGauge, "Resident memory size in bytes."},
    {"process_cpu_seconds_total", MetricType::kCounter,
     "User and system CPU time spent in seconds."},
    {"process_open_fds", MetricType::kGauge, "Number of open file descriptors."},
    {"process_start_time_seconds", MetricType::kGauge,
     "Start time of the process since the Unix epoch in seconds."},
};

std::vector<MetricFamily> BuildFamilies() {
  // A worker's own /metrics shows its share of the job path's families as
  // warden_worker_*: the same names as the fleet's would be summed twice by
  // rules that sum over every target.
  static std::deque<std::string> names;
  static std::deque<std::string> helps;
  std::vector<MetricFamily> out = kStoreFamilies;
  for (const MetricFamily& f : kJobPathFamilies) out.push_back(f);
  for (const MetricFamily& f : kWorkerFamilies) out.push_back(f);
  for (const MetricFamily& f : kJobPathFamilies) {
    names.push_back("warden_worker_" + std::string(f.name + 7));
    helps.push_back(std::string("This worker's share: ") + f.help);
    out.push_back({names.back().c_str(), f.type, helps.back().c_str(), f.buckets});
  }
  return out;
}

// The family a series belongs to, and its name alone.
std::string SeriesName(const std::string& series) {
  return series.substr(0, series.find('{'));
}

const MetricFamily* FamilyOfName(const std::string& name) {
  if (const MetricFamily* f = FindMetricFamily(name)) return f;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string_view s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      const MetricFamily* f = FindMetricFamily(name.substr(0, name.size() - s.size()));
      if (f && f->type == MetricType::kHistogram) return f;
    }
  }
  return nullptr;
}

const char* TypeName(MetricType t) {
  switch (t) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

std::string FormatValue(double v) {
  if (v == static_cast<double>(static_cast<int64_t>(v)) && v < 9e15 && v > -9e15) {
    return std::to_string(static_cast<int64_t>(v));
  }
  // To the microsecond, then the shortest digits that read back as that:
  // the binary noise of a sum (a run's 0.001 s added thousands of times, by
  // workers and again by the server) is far below it, and no value warden
  // exports is finer (times are kept in milliseconds). Under 9e9 the scaled
  // value is an exact integer in a double; above, rounding would do nothing.
  if (v < 9e9 && v > -9e9) v = std::round(v * 1e6) / 1e6;
  return fmt::format("{}", v);
}

std::string FormatBound(double b) { return fmt::format("{}", b); }

}  // namespace

const std::vector<MetricFamily>& MetricFamilies() {
  static const std::vector<MetricFamily> families = BuildFamilies();
  return families;
}

const MetricFamily* FindMetricFamily(std::string_view name) {
  for (const MetricFamily& f : MetricFamilies()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::string MetricLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
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

std::string MetricSeries(std::string_view name, const MetricLabels& labels) {
  std::string out(name);
  if (labels.empty()) return out;
  out += '{';
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ',';
    out += labels[i].first;
    out += "=\"";
    out += MetricLabelValue(labels[i].second);
    out += '"';
  }
  out += '}';
  return out;
}

void Metrics::Count(std::string_view family, const MetricLabels& labels, double delta) {
  const std::string series = MetricSeries(family, labels);
  MutexLock lock(mu_);
  counters_[series] += delta;
  ++version_;
}

void Metrics::Observe(std::string_view family, const MetricLabels& labels, double seconds) {
  ObserveMany(family, labels, std::span(&seconds, 1));
}

void Metrics::ObserveMany(std::string_view family, const MetricLabels& labels,
                          std::span<const double> seconds) {
  const MetricFamily* f = FindMetricFamily(family);
  if (!f || !f->buckets || seconds.empty()) return;
  const std::vector<double>& bounds = *f->buckets;
  MutexLock lock(mu_);
  Histogram& h = histograms_[{std::string(family), labels}];
  if (h.counts.empty()) h.counts.assign(bounds.size() + 1, 0);
  for (const double s : seconds) {
    ++h.counts[static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), s) -
                                   bounds.begin())];
    h.sum += s;
    ++h.count;
  }
  ++version_;
}

namespace {

// A histogram's series: cumulative bucket counts (`counts` per bucket, +Inf
// last; empty: all 0), its sum and count.
void PutHistogram(MetricSnapshot& out, std::string_view family, const MetricLabels& labels,
                  const std::vector<uint64_t>& counts, double sum, uint64_t count) {
  const std::vector<double>& bounds = *FindMetricFamily(family)->buckets;
  const std::string name(family);
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds.size(); ++i) {
    if (!counts.empty()) cumulative += counts[i];
    MetricLabels with_le = labels;
    with_le.emplace_back("le", i < bounds.size() ? FormatBound(bounds[i]) : "+Inf");
    out[MetricSeries(name + "_bucket", with_le)] = static_cast<double>(cumulative);
  }
  out[MetricSeries(name + "_sum", labels)] = sum;
  out[MetricSeries(name + "_count", labels)] = static_cast<double>(count);
}

}  // namespace

MetricSnapshot Metrics::Snapshot() const {
  MutexLock lock(mu_);
  MetricSnapshot out = counters_;
  for (const auto& [key, h] : histograms_) {
    PutHistogram(out, key.first, key.second, h.counts, h.sum, h.count);
  }
  return out;
}

void AddZeroHistogram(MetricSnapshot& into, std::string_view family, const MetricLabels& labels) {
  const MetricFamily* f = FindMetricFamily(family);
  if (!f || !f->buckets) return;
  PutHistogram(into, family, labels, {}, 0, 0);
}

uint64_t Metrics::version() const {
  MutexLock lock(mu_);
  return version_;
}

void AddSnapshot(MetricSnapshot& into, const MetricSnapshot& from) {
  for (const auto& [series, value] : from) into[series] += value;
}

std::string SnapshotToJson(const MetricSnapshot& s) {
  Json j = Json::object();
  for (const auto& [series, value] : s) j[series] = value;
  return j.dump();
}

MetricSnapshot SnapshotFromJson(std::string_view text) {
  MetricSnapshot out;
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return out;
  for (const auto& [series, value] : j.items()) {
    if (value.is_number()) out[series] = value.get<double>();
  }
  return out;
}

std::string RenderMetrics(const MetricSnapshot& series) {
  // family -> its series, in the order of MetricFamilies(), then unknown
  // families by name.
  std::map<std::string, std::vector<const std::pair<const std::string, double>*>> by_family;
  for (const auto& entry : series) {
    const std::string name = SeriesName(entry.first);
    const MetricFamily* f = FamilyOfName(name);
    by_family[f ? f->name : name].push_back(&entry);
  }
  std::string out;
  auto emit = [&](const std::string& family, const MetricFamily* f) {
    auto it = by_family.find(family);
    if (it == by_family.end()) return;
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", family, f ? f->help : family, family,
                       f ? TypeName(f->type) : "untyped");
    // A histogram's series in the order the format expects: by labels,
    // buckets ascending (by le, not as text), then _sum and _count.
    std::vector<const std::pair<const std::string, double>*> rows = it->second;
    if (f && f->type == MetricType::kHistogram) {
      auto rank = [&](const std::string& s) {
        const std::string name = SeriesName(s);
        const size_t brace = s.find('{');
        std::string labels = brace == std::string::npos ? "" : s.substr(brace);
        double le = 0;
        int part = 0;
        const size_t le_at = labels.find("le=\"");
        if (name.ends_with("_bucket") && le_at != std::string::npos) {
          const std::string v = labels.substr(le_at + 4, labels.find('"', le_at + 4) - le_at - 4);
          le = v == "+Inf" ? 1e300 : std::strtod(v.c_str(), nullptr);
          labels.erase(le_at > 0 && labels[le_at - 1] == ',' ? le_at - 1 : le_at);
        } else {
          part = name.ends_with("_sum") ? 1 : 2;
        }
        if (!labels.empty() && labels.back() != '}') labels += '}';
        if (labels == "{}" || labels == "{") labels.clear();
        return std::make_tuple(labels, part, le);
      };
      std::stable_sort(rows.begin(), rows.end(), [&](auto* a, auto* b) {
        return rank(a->first) < rank(b->first);
      });
    }
    for (const auto* row : rows) out += row->first + " " + FormatValue(row->second) + "\n";
    by_family.erase(it);
  };
  for (const MetricFamily& f : MetricFamilies()) emit(f.name, &f);
  while (!by_family.empty()) emit(by_family.begin()->first, nullptr);
  return out;
}

}  // namespace warden
