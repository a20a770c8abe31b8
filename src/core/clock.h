// Clock: the one way warden code reads time, so tests can drive it.
//
// Two readings: wall time (ms since the epoch, what the store compares
// leases against on a single host) and monotonic time (what a worker uses to
// measure its own heartbeat age: it never jumps when the wall clock is set).
// Thread safety: implementations are safe to call from any thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "warden/job.h"

namespace warden {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs NowMs() const = 0;        // wall clock, ms since epoch
  virtual int64_t MonotonicMs() const = 0;  // arbitrary origin, never jumps
};

// A clock that moves only when told to. Optionally offset from another
// clock's wall time (to test a worker whose clock is skewed).
class FakeClock : public Clock {
 public:
  explicit FakeClock(TimeMs start = 1'700'000'000'000) : now_(start), mono_(0) {}
  TimeMs NowMs() const override { return now_.load(); }
  int64_t MonotonicMs() const override { return mono_.load(); }
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
