// Metrics: the counters and histograms of the job path, kept by the process
// where each event happens and summed fleet-wide through the database.
//
// A worker counts what it sees (attempts it finished, the wait before each
// claim, run times, the jobs its maintenance passes rescued) in a Metrics
// object, and writes a snapshot of it into its own worker row with each
// heartbeat (Store::WorkerPutMetrics). `warden serve` sums the snapshots of
// every worker row, plus what pruned rows left behind (folded into a
// retired total in the same transaction that deletes them), so a counter
// never goes down and any number of `serve` processes report one value.
// What a worker counted after its last snapshot dies with it: at most one
// heartbeat interval (1 s by default) of counts. Fenced writes are not
// counted here: the store logs each one, and the totals count the log.
//
// A snapshot maps each series, written as in the Prometheus text format
// (`name{label="value",...}`, histograms as their _bucket/_sum/_count
// series), to its value. That form adds up by key, in C++ and in SQL alike.
//
// Thread safety: a Metrics object is shared by the threads of its process.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/mutex.h"

namespace warden {

enum class MetricType { kCounter, kGauge, kHistogram };

struct MetricFamily {
  const char* name;
  MetricType type;
  const char* help;
  // Histograms: the upper bounds (seconds) of the buckets, +Inf implied.
  const std::vector<double>* buckets = nullptr;
};

// Every family warden exports (docs/metrics.md); the exposition writes a
// family's HELP and TYPE from here.
const std::vector<MetricFamily>& MetricFamilies();
const MetricFamily* FindMetricFamily(std::string_view name);

// The names of the job path's families, used where they are counted.
inline constexpr char kJobsCompleted[] = "warden_jobs_completed_total";
inline constexpr char kJobsRescued[] = "warden_jobs_rescued_total";
inline constexpr char kCrashLoopQuarantines[] = "warden_crash_loop_quarantines_total";
inline constexpr char kFencedWrites[] = "warden_fenced_writes_total";
inline constexpr char kJobWait[] = "warden_job_wait_seconds";
inline constexpr char kJobRun[] = "warden_job_run_seconds";
inline constexpr char kRecovery[] = "warden_recovery_seconds";

// What an attempt meant for its job (the `outcome` label of
// warden_jobs_completed_total).
inline constexpr const char* kOutcomes[] = {"succeeded", "failed", "dead", "cancelled"};
// How a running job's loss was found (the `cause` label of
// warden_jobs_rescued_total and warden_recovery_seconds).
inline constexpr const char* kRescueCauses[] = {"proven_death", "lease_expiry", "release",
                                                 "operator"};

using MetricLabels = std::vector<std::pair<std::string, std::string>>;
// series -> value, as described above.
using MetricSnapshot = std::map<std::string, double>;

// A label value escaped as the text format needs it (backslash, quote,
// line feed).
std::string MetricLabelValue(std::string_view v);
// `name{a="x",b="y"}`, or `name` without labels.
std::string MetricSeries(std::string_view name, const MetricLabels& labels);

class Metrics {
 public:
  void Count(std::string_view family, const MetricLabels& labels, double delta = 1)
      EXCLUDES(mu_);
  void Observe(std::string_view family, const MetricLabels& labels, double seconds)
      EXCLUDES(mu_);
  // Observe for each of `seconds`, with one lookup of the series.
  void ObserveMany(std::string_view family, const MetricLabels& labels,
                   std::span<const double> seconds) EXCLUDES(mu_);
  MetricSnapshot Snapshot() const EXCLUDES(mu_);
  // Changes on every Count/Observe: a snapshot needs writing again only
  // when it moved.
  uint64_t version() const EXCLUDES(mu_);

 private:
  struct Histogram {
    std::vector<uint64_t> counts;  // per bucket, not cumulative; last: +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  mutable Mutex mu_;
  std::map<std::string, double> counters_ GUARDED_BY(mu_);
  // (family, labels without le) -> histogram
  std::map<std::pair<std::string, MetricLabels>, Histogram> histograms_ GUARDED_BY(mu_);
  uint64_t version_ GUARDED_BY(mu_) = 0;
};

// Adds `from` into `into`, series by series.
void AddSnapshot(MetricSnapshot& into, const MetricSnapshot& from);
// Histogram `family` with `labels` as it stands before its first event:
// every bucket, _sum and _count at 0, under the keys Metrics::Snapshot
// writes (so a real snapshot's values replace them series by series).
void AddZeroHistogram(MetricSnapshot& into, std::string_view family, const MetricLabels& labels);

// A snapshot as a JSON object (what a worker row stores), and back. A text
// that is not such an object reads as empty: a row damaged by hand must
// not stop the server's scrape.
std::string SnapshotToJson(const MetricSnapshot& s);
MetricSnapshot SnapshotFromJson(std::string_view text);

// The Prometheus text format (0.0.4) of `series`: grouped by family, each
// family's HELP and TYPE once, families in the order of MetricFamilies()
// and then any others by name.
std::string RenderMetrics(const MetricSnapshot& series);

}  // namespace warden
