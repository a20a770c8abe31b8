#include "server/stats_history.h"

#include <string>

namespace warden::server {

namespace {

int64_t CountOf(const Stats& stats, const std::string& state) {
  for (const auto& [name, n] : stats.jobs) {
    if (name == state) return n;
  }
  return 0;
}

}  // namespace

void StatsHistory::Record(const Stats& stats, TimeMs now) {
  std::lock_guard lock(mu_);
  // A clock stepped back: the newer samples would sit before the older.
  if (!samples_.empty() && now < samples_.back().at) samples_.clear();
  if (!samples_.empty() && now - samples_.back().at < kMinGapMs) return;
  samples_.push_back({now, CountOf(stats, "succeeded"), CountOf(stats, "dead")});
  while (samples_.size() > kMaxSamples || samples_.front().at < now - kSpanMs) {
    samples_.pop_front();
  }
}

std::vector<StatsSample> StatsHistory::Samples() const {
  std::lock_guard lock(mu_);
  return {samples_.begin(), samples_.end()};
}

}  // namespace warden::server
