// Waiting in a test: never a fixed sleep before an assertion. A test waits
// for the state it expects, with a deadline, and then asserts on it; where
// the claim is that something does NOT happen, it says for how long it
// watched, with StaysTrueFor.
//
//   ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); })) << w.Log();
//   EXPECT_TRUE(StaysTrueFor([&] { return LedgerFor(id, "start").empty(); }, Millis(1500)))
//       << "started while its worker's lock was lost";
//
// Both return a ::testing::AssertionResult: in EXPECT_TRUE/ASSERT_TRUE a
// failure prints the condition's source text (what was awaited) and how
// long it was watched; anywhere else it tests as a bool. A sleep that is
// the test's stimulus (hold a lock this long, let jobs run a second before
// the cut) is not a wait, and says so in a comment where it stands.
//
// Thread safety: thread-compatible; `cond` runs on the calling thread.
#pragma once

#include <gtest/gtest.h>

#include "poll_until.h"

namespace warden::testing {

// Polls `cond` every `every` until it holds; fails if it still does not
// after `timeout`.
::testing::AssertionResult WaitFor(const std::function<bool()>& cond, Millis timeout = kDeadline,
                                   Millis every = Millis(25));

// Polls `cond` every `every` for `duration`; fails as soon as it does not
// hold, saying when. For "nothing happens within X": the time is the claim.
::testing::AssertionResult StaysTrueFor(const std::function<bool()>& cond, Millis duration,
                                        Millis every = Millis(25));

}  // namespace warden::testing
