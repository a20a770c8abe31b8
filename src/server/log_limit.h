// One log line a second at most for a kind of event any client can cause
// at will (failed TLS handshakes, failed authentication, cross-site
// refusals): a flood of them must not flood the log. The line that is
// written says how many were not.
//
// Thread safety: Allow may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace warden::server {

class LogLimit {
 public:
  // Empty: drop this event's line (it is counted). Otherwise the suffix to
  // append to the line, "" or " (and 12 more in the last second, not
  // logged)".
  std::optional<std::string> Allow() {
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    int64_t last = logged_ms_.load();
    if (now - last < 1000 || !logged_ms_.compare_exchange_strong(last, now)) {
      ++untold_;
      return std::nullopt;
    }
    const int untold = untold_.exchange(0);
    if (untold == 0) return std::string();
    return " (and " + std::to_string(untold) + " more in the last second, not logged)";
  }

 private:
  // The steady clock's ms of the last line, and how many events since went
  // untold.
  std::atomic<int64_t> logged_ms_{std::numeric_limits<int64_t>::min() / 2};
  std::atomic<int> untold_{0};
};

}  // namespace warden::server
