// Waits through a Clock (core/clock.h, core/mutex.h): a FakeClock's waits
// end when the clock is advanced past their deadline, or when notified,
// and never before.
#include "core/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/mutex.h"

namespace warden {
namespace {

// Polls `done` for up to 10 s of real time.
bool Eventually(const std::atomic<bool>& done) {
  for (int i = 0; i < 10'000 && !done; ++i) std::this_thread::sleep_for(Millis(1));
  return done;
}

TEST(FakeClockTest, AWaitEndsWhenTheClockPassesItsDeadlineAndNotBefore) {
  FakeClock clock;
  Mutex mu;
  CondVar cv(clock);
  std::atomic<bool> done{false};
  bool timed_out = false;
  std::thread waiter([&] {
    UniqueMutexLock lock(mu);
    timed_out = !cv.WaitUntil(lock, 100, [] { return false; });
    done = true;
  });
  clock.Advance(Millis(99));
  // Real time passes; the clock does not reach the deadline.
  std::this_thread::sleep_for(Millis(30));
  EXPECT_FALSE(done);
  clock.Advance(Millis(1));
  EXPECT_TRUE(Eventually(done));
  waiter.join();
  EXPECT_TRUE(timed_out);
}

TEST(FakeClockTest, ANotifiedWaitEndsWithoutTheClockMoving) {
  FakeClock clock;
  Mutex mu;
  CondVar cv(clock);
  bool ready = false;
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    UniqueMutexLock lock(mu);
    EXPECT_TRUE(cv.WaitFor(lock, Millis(1'000'000), [&] { return ready; }));
    done = true;
  });
  {
    MutexLock lock(mu);
    ready = true;
  }
  cv.NotifyAll();
  EXPECT_TRUE(Eventually(done));
  waiter.join();
  EXPECT_EQ(clock.MonotonicMs(), 0);
}

TEST(FakeClockTest, SleepForLastsVirtualTime) {
  FakeClock clock;
  std::atomic<bool> done{false};
  std::atomic<bool> asleep{false};
  std::thread sleeper([&] {
    asleep = true;
    clock.SleepFor(Millis(5000));  // from 0: the clock moves only below
    done = true;
  });
  EXPECT_TRUE(Eventually(asleep));
  std::this_thread::sleep_for(Millis(20));
  EXPECT_FALSE(done);
  clock.Advance(Millis(5000));
  EXPECT_TRUE(Eventually(done));
  sleeper.join();
}

TEST(FakeClockTest, APredicateAlreadyTrueDoesNotWait) {
  FakeClock clock;
  Mutex mu;
  CondVar cv(clock);
  UniqueMutexLock lock(mu);
  EXPECT_TRUE(cv.WaitFor(lock, Millis(0), [] { return true; }));
  EXPECT_FALSE(cv.WaitFor(lock, Millis(0), [] { return false; }));
}

}  // namespace
}  // namespace warden
