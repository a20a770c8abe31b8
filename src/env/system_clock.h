// The real clock.
#pragma once

#include "core/clock.h"

namespace warden {

class SystemClock : public Clock {
 public:
  TimeMs NowMs() const override;
  int64_t MonotonicMs() const override;
  int64_t MonotonicUs() const override;
  static SystemClock& Get();
};

// A clock offset from the system's by a fixed amount (a skewed host).
class OffsetClock : public Clock {
 public:
  explicit OffsetClock(Millis offset) : offset_(offset.count()) {}
  TimeMs NowMs() const override { return SystemClock::Get().NowMs() + offset_; }
  int64_t MonotonicMs() const override { return SystemClock::Get().MonotonicMs(); }

 private:
  int64_t offset_;
};

}  // namespace warden
