// Flow control's pure parts: the N/INTERVAL and concurrency parsers, how
// many claims a limited queue allows, when a full rate window opens, and
// how a claim is narrowed (store/claim_flow.h, shared by every backend).
#include "warden/flow.h"

#include <gtest/gtest.h>

#include "core/flow.h"
#include "store/claim_flow.h"

namespace warden {
namespace {

TEST(ParseRate, ReadsACountPerDurationOrPerUnit) {
  EXPECT_EQ(ParseRate("10/1s").value(), (RateLimit{10, Millis(1000)}));
  EXPECT_EQ(ParseRate("100/m").value(), (RateLimit{100, Millis(60'000)}));
  EXPECT_EQ(ParseRate("5/1h30m").value(), (RateLimit{5, Millis(5'400'000)}));
  EXPECT_EQ(ParseRate("1/250ms").value(), (RateLimit{1, Millis(250)}));
  EXPECT_EQ(ParseRate("007/d").value(), (RateLimit{7, Millis(86'400'000)}));
  EXPECT_EQ(ParseRate("1000000/1s").value().count, kMaxFlowLimit);
}

TEST(ParseRate, RefusesWithOneLineNamingTheProblem) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty"},
      {"10", "want N/INTERVAL"},
      {"10/", "missing the interval"},
      {"/1s", "the count must be a whole number"},
      {"-5/1s", "the count must be a whole number"},
      {"0/1s", "the count must be a whole number from 1 to 1000000"},
      {"1000001/1s", "from 1 to 1000000"},
      {"99999999999999999999999/1s", "from 1 to 1000000"},
      {"10/0s", "at least 1ms"},
      {"10/-1s", "not a duration"},
      {"10/1x", "not a duration"},
      {"10 /1s", "the count must be a whole number"},
      {"10/1s/2", "not a duration"},
      {"1.5/1s", "the count must be a whole number"},
      {"10/400d", "not a duration"},
  };
  for (const auto& [text, says] : cases) {
    auto r = ParseRate(text);
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find(says), std::string::npos) << r.error().message();
    EXPECT_EQ(r.error().message().find('\n'), std::string::npos);
  }
  EXPECT_EQ(ParseRate("10/1s\n2").error().message().find('\n'), std::string::npos);
}

TEST(ParseRate, FormatReadsBack) {
  for (const RateLimit r : {RateLimit{1, Millis(1)}, RateLimit{10, Millis(1000)},
                            RateLimit{7, Millis(5'400'000)}, RateLimit{3, Millis(1234)}}) {
    EXPECT_EQ(ParseRate(FormatRate(r)).value(), r) << FormatRate(r);
  }
  EXPECT_EQ(FormatRate(RateLimit{10, Millis(1000)}), "10/1s");
}

TEST(ParseConcurrencyLimit, DecimalFromOneToTheMaximum) {
  EXPECT_EQ(ParseConcurrencyLimit("5").value(), 5);
  EXPECT_EQ(ParseConcurrencyLimit("010").value(), 10) << "decimal, not octal";
  EXPECT_EQ(ParseConcurrencyLimit("1000000").value(), kMaxFlowLimit);
  for (const char* bad : {"", "0", "-1", "+1", "1000001", "0x10", "1.5", " 1", "abc",
                          "99999999999999999999"}) {
    auto r = ParseConcurrencyLimit(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message().find("from 1 to 1000000"), std::string::npos);
  }
}

TEST(ClaimsAllowed, TheTighterLimitWinsAndNeverBelowZero) {
  QueueLimits l;
  EXPECT_EQ(ClaimsAllowed(l, 100, 100), INT64_MAX) << "no limit";
  l.concurrency = 5;
  EXPECT_EQ(ClaimsAllowed(l, 3, 0), 2);
  EXPECT_EQ(ClaimsAllowed(l, 7, 0), 0) << "a lowered limit: nothing, no error";
  l.rate = RateLimit{4, Millis(1000)};
  EXPECT_EQ(ClaimsAllowed(l, 0, 3), 1);
  EXPECT_EQ(ClaimsAllowed(l, 4, 0), 1);
}

TEST(NextStartAt, WhenEnoughClaimsHaveAgedOut) {
  const RateLimit r{3, Millis(1000)};
  EXPECT_FALSE(NextStartAt(r, std::vector<StartCount>{{100, 2}}).has_value()) << "room now";
  EXPECT_EQ(NextStartAt(r, std::vector<StartCount>{{100, 2}, {400, 1}}), 1100);
  EXPECT_EQ(NextStartAt(r, std::vector<StartCount>{{100, 1}, {400, 3}}), 1400)
      << "four in a window of three: two must leave";
}

TEST(Narrow, TakesOutPausedAndFullQueuesAndCapsALoneLimitedOne) {
  ClaimParams p;
  p.queues = {"a", "b", "c"};
  p.limit = 8;
  p.ahead = 3;
  std::vector<FlowRow> rows(2);
  rows[0].queue = "a";
  rows[0].limits.concurrency = 2;
  rows[0].running = 2;
  rows[1].queue = "b";
  rows[1].limits.concurrency = 4;
  rows[1].running = 1;
  const ClaimFlow flow = FlowOf(rows);
  EXPECT_EQ(flow.blocked, std::set<std::string>{"a"});
  EXPECT_EQ(flow.caps.at("b"), 3);
  ClaimParams out;
  ASSERT_TRUE(Narrow(p, {"c"}, flow, &out));
  EXPECT_EQ(out.queues, std::vector<std::string>{"b"});
  EXPECT_EQ(out.limit, 3) << "its cap, and only free slots (8 - 3 ahead = 5)";
  EXPECT_EQ(out.ahead, 0);
  p.queues = {"a"};
  EXPECT_FALSE(Narrow(p, {}, flow, &out));
  EXPECT_TRUE(FlowTakes(flow, "b", 2, false));
  EXPECT_FALSE(FlowTakes(flow, "b", 3, false));
  EXPECT_FALSE(FlowTakes(flow, "b", 0, true)) << "never ahead";
  EXPECT_TRUE(FlowTakes(flow, "free", 50, true));
  EXPECT_FALSE(FlowTakes(flow, "a", 0, false));
}

}  // namespace
}  // namespace warden
