// Polling a condition against a deadline, for code that decides what to do
// next from the answer (a runner, a helper, a measurement). A test's
// assertion waits with WaitFor (wait.h), which says what it waited for when
// it fails.
//
// Thread safety: thread-compatible; `cond` runs on the calling thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace warden::testing {

using Millis = std::chrono::milliseconds;
using SteadyTime = std::chrono::steady_clock::time_point;

// How long a test waits for what normally takes far less. Generous: a
// loaded 2-core box running the suite twice in parallel, once under a
// sanitizer. Conditions normally hold long before this.
inline constexpr Millis kDeadline{20'000};

// Calls `cond` every `every` until it holds (true) or `timeout` has passed
// (false). `cond` is called at least once, and once more at the deadline.
bool PollUntil(const std::function<bool()>& cond, Millis timeout, Millis every = Millis(25));

// Milliseconds on the steady clock since `t`.
int64_t MillisSince(SteadyTime t);

}  // namespace warden::testing
