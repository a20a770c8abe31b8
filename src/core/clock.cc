#include "core/clock.h"

#include <chrono>

#include "core/mutex.h"

namespace warden {

void Clock::Wait(CondVar& cv, UniqueMutexLock& lock, int64_t deadline_mono) const {
  if (deadline_mono == kNoDeadline) {
    cv.native().wait(lock.native());
    return;
  }
  const int64_t left = deadline_mono - MonotonicMs();
  if (left <= 0) return;
  cv.native().wait_for(lock.native(), std::chrono::milliseconds(left));
}

void Clock::Notify(CondVar& cv, bool all) const {
  if (all) {
    cv.native().notify_all();
  } else {
    cv.native().notify_one();
  }
}

void Clock::SleepFor(Millis d) const {
  Mutex mu;
  CondVar cv(*this);
  UniqueMutexLock lock(mu);
  cv.WaitFor(lock, d, [] { return false; });
}

// Advance does not know the waiters: each looks at the clock again every
// real millisecond, which spares FakeClock a registry of waiters and their
// mutexes (and the lock-order questions of notifying them).
void FakeClock::Wait(CondVar& cv, UniqueMutexLock& lock, int64_t deadline_mono) const {
  if (MonotonicMs() >= deadline_mono) return;
  cv.native().wait_for(lock.native(), std::chrono::milliseconds(1));
}

}  // namespace warden
