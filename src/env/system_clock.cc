#include "env/system_clock.h"

#include <time.h>

#include <chrono>

namespace warden {

TimeMs SystemClock::NowMs() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// CLOCK_BOOTTIME, not steady_clock's CLOCK_MONOTONIC: the latter stops while
// the host is suspended, so a worker resumed after its leases passed would
// not see how long it was away and would not fence itself.
int64_t SystemClock::MonotonicMs() const {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

int64_t SystemClock::MonotonicUs() const {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

SystemClock& SystemClock::Get() {
  static SystemClock clock;
  return clock;
}

}  // namespace warden
