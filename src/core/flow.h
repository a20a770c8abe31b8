// Flow control's arithmetic, shared by every backend's claim (the rules
// are in warden/flow.h). Pure.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>

#include "warden/operator.h"

namespace warden {

// How many of a limited queue's jobs one claim may take now: `running` of
// its jobs run, and `recent_starts` were claimed within the rate window
// that ends now. 0: none (a limit lowered below what runs is no error).
int64_t ClaimsAllowed(const QueueLimits& limits, int64_t running, int64_t recent_starts);

// Claims recorded at one moment (a batch is one row).
struct StartCount {
  TimeMs at = 0;
  int64_t n = 0;
};
// The claims of the window that ends now, oldest first: when the window
// next allows a claim (the moment enough of them are `per` old), or
// nullopt when it allows one now.
std::optional<TimeMs> NextStartAt(const RateLimit& rate, std::span<const StartCount> window);

}  // namespace warden
