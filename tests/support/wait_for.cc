#include "wait_for.h"

#include <algorithm>
#include <thread>

namespace warden::testing {

::testing::AssertionResult WaitFor(const std::function<bool()>& cond, Millis timeout,
                                   Millis every) {
  if (PollUntil(cond, timeout, every)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "still false after " << timeout.count() << " ms";
}

::testing::AssertionResult StaysTrueFor(const std::function<bool()>& cond, Millis duration,
                                        Millis every) {
  const SteadyTime start = std::chrono::steady_clock::now();
  const SteadyTime end = start + duration;
  while (true) {
    if (!cond()) {
      return ::testing::AssertionFailure()
             << "became false after " << MillisSince(start) << " ms of the " << duration.count()
             << " ms watched";
    }
    const SteadyTime now = std::chrono::steady_clock::now();
    if (now >= end) return ::testing::AssertionSuccess();
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(every, end - now));
  }
}

}  // namespace warden::testing
