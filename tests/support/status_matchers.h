// gmock matchers for warden::Status and warden::Result<T>: a failed check
// prints the status (code and message) instead of "Value of: s.ok()".
//
//   EXPECT_THAT(worker->Run(), IsOk());
//   ASSERT_THAT(client->GetJob(id), IsOk());          // a Result: has_value()
//   EXPECT_THAT(store->JobClaim(p), StatusIs(warden::StatusCode::kUnavailable));
//   EXPECT_THAT(s, StatusIs(warden::StatusCode::kInvalidArgument,
//                           ::testing::HasSubstr("--lease")));
//
// Thread safety: stateless.
#pragma once

#include <gmock/gmock.h>

#include <ostream>
#include <string>

#include "warden/status.h"

namespace warden {

// How gtest prints a Status or a Result in a failure message.
inline void PrintTo(const Status& s, std::ostream* os) { *os << s.ToString(); }
template <typename T>
void PrintTo(const Result<T>& r, std::ostream* os) {
  if (r.has_value()) {
    *os << "a value: " << ::testing::PrintToString(r.value());
  } else {
    *os << r.error().ToString();
  }
}

namespace testing {

inline const Status& StatusOf(const Status& s) { return s; }
template <typename T>
Status StatusOf(const Result<T>& r) {
  return r.status();
}

// Matches an ok Status, or a Result that holds a value.
MATCHER(IsOk, negation ? "is not ok" : "is ok") {
  (void)result_listener;
  return StatusOf(arg).ok();
}

// Matches a Status, or a Result's error, with code `code`.
MATCHER_P(StatusIs, code,
          std::string(negation ? "has a code other than " : "has code ") + StatusCodeName(code)) {
  (void)result_listener;
  return StatusOf(arg).code() == code;
}

// ... and a message that `message_matcher` matches.
MATCHER_P2(StatusIs, code, message_matcher,
           std::string(negation ? "does not have code " : "has code ") + StatusCodeName(code) +
               " and a message that " +
               ::testing::DescribeMatcher<std::string>(message_matcher, negation)) {
  const Status s = StatusOf(arg);
  return s.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, s.message(), result_listener);
}

}  // namespace testing
}  // namespace warden
