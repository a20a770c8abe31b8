// The overview's chart samples, kept by the server: each answer of
// GET /v1/stats adds its jobs succeeded and dead, one a second at most,
// and the newest ten minutes' are kept (600 samples at most), so that a
// dashboard opened or reloaded draws the last minute at once from
// GET /v1/stats/history instead of starting empty. In memory only: a
// restarted server starts empty, and nothing is sampled while no one
// reads the stats (the dashboard's overview reads them every few seconds).
//
// Thread safety: Record and Samples may be called from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "warden/job.h"

namespace warden::server {

struct StatsSample {
  TimeMs at = 0;  // the server's wall clock
  int64_t succeeded = 0;
  int64_t dead = 0;
};

class StatsHistory {
 public:
  static constexpr TimeMs kMinGapMs = 1000;
  static constexpr TimeMs kSpanMs = 10 * 60 * 1000;
  static constexpr size_t kMaxSamples = kSpanMs / kMinGapMs;

  // Adds the sample of `stats` taken at `now`, unless one was added less
  // than kMinGapMs before it; drops those older than kSpanMs.
  void Record(const Stats& stats, TimeMs now);
  std::vector<StatsSample> Samples() const;

 private:
  mutable std::mutex mu_;
  std::deque<StatsSample> samples_;  // guarded by mu_, oldest first
};

}  // namespace warden::server
