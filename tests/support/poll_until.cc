#include "poll_until.h"

#include <algorithm>
#include <thread>

namespace warden::testing {

bool PollUntil(const std::function<bool()>& cond, Millis timeout, Millis every) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (cond()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(every, deadline - now));
  }
}

int64_t MillisSince(SteadyTime t) {
  return std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace warden::testing
