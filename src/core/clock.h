// Clock: the one way warden code reads time and waits for it, so tests can
// drive it.
//
// Two readings: wall time (ms since the epoch, what a store writes leases
// and heartbeats with) and monotonic time (what a worker measures its own
// silences and deadlines with: it never jumps when the wall clock is set).
//
// Every wait in the runtime goes through a clock too (CondVar, in
// core/mutex.h): on a real clock it is a condition variable's timed wait; a
// simulated clock parks the thread until virtual time reaches its deadline
// or another thread notifies it, which lets the simulation run the real
// runtime in virtual time.
//
// Thread safety: implementations are safe to call from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

#include "warden/job.h"

namespace warden {

class CondVar;
class UniqueMutexLock;

// A wait's deadline that never comes.
inline constexpr int64_t kNoDeadline = std::numeric_limits<int64_t>::max();

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs NowMs() const = 0;        // wall clock, ms since epoch
  virtual int64_t MonotonicMs() const = 0;  // arbitrary origin, never jumps
  // The monotonic clock in µs, to measure spans shorter than a ms.
  virtual int64_t MonotonicUs() const { return MonotonicMs() * 1000; }

  // Blocks, with `lock` released, until `cv` is notified, MonotonicMs()
  // reaches `deadline_mono`, or spuriously: callers wait in a loop on a
  // condition (CondVar's predicate forms). The default is the real thing.
  virtual void Wait(CondVar& cv, UniqueMutexLock& lock, int64_t deadline_mono) const;
  virtual void Notify(CondVar& cv, bool all) const;

  // Blocks until MonotonicMs() reaches now + `d`, uninterrupted.
  void SleepFor(Millis d) const;
};

// A clock that moves only when told to. Waits return when Advance takes the
// clock past their deadline (each waiter looks again every real ms), or
// when notified.
class FakeClock : public Clock {
 public:
  explicit FakeClock(TimeMs start = 1'700'000'000'000) : now_(start), mono_(0) {}
  TimeMs NowMs() const override { return now_.load(); }
  int64_t MonotonicMs() const override { return mono_.load(); }
  void Wait(CondVar& cv, UniqueMutexLock& lock, int64_t deadline_mono) const override;
  void Advance(Millis d) {
    now_ += d.count();
    mono_ += d.count();
  }
  void SetWall(TimeMs t) { now_ = t; }

 private:
  std::atomic<TimeMs> now_;
  std::atomic<int64_t> mono_;
};

}  // namespace warden
