#include "core/duration.h"

#include <gtest/gtest.h>

#include "core/lease.h"

namespace warden {
namespace {

TEST(ParseDuration, AcceptsUnits) {
  EXPECT_EQ(ParseDuration("250ms").value(), Millis(250));
  EXPECT_EQ(ParseDuration("10s").value(), Millis(10'000));
  EXPECT_EQ(ParseDuration("1.5s").value(), Millis(1'500));
  EXPECT_EQ(ParseDuration("5m").value(), Millis(300'000));
  EXPECT_EQ(ParseDuration("2h").value(), Millis(7'200'000));
  EXPECT_EQ(ParseDuration("0s").value(), Millis(0));
}

TEST(ParseDuration, RejectsWithAClearMessage) {
  for (const char* bad : {"", "10", "s", "-1s", "10x", "1.2.3s", "ms10", "99999999999999d", "1h30"}) {
    auto r = ParseDuration(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find("examples"), std::string::npos);
  }
}

TEST(ParseDuration, AcceptsCompoundValuesLargestUnitFirst) {
  EXPECT_EQ(ParseDuration("1h30m").value(), Millis(5'400'000));
  EXPECT_EQ(ParseDuration("2m30s").value(), Millis(150'000));
  EXPECT_EQ(ParseDuration("1d12h").value(), Millis(129'600'000));
  EXPECT_EQ(ParseDuration("1s500ms").value(), Millis(1'500));
  EXPECT_EQ(ParseDuration("1d2h3m4s5ms").value(), Millis(93'784'005));
  EXPECT_EQ(ParseDuration("1h0m").value(), Millis(3'600'000));
  EXPECT_EQ(ParseDuration("1.5h30m").value(), Millis(7'200'000));  // fractions in any part
  EXPECT_EQ(ParseDuration("0.5s0.4ms").value(), Millis(500));       // each part rounds
}

TEST(ParseDuration, CompoundValuesMustBeWellFormed) {
  const struct {
    const char* text;
    const char* why;
  } kCases[] = {
      {"30m1h", "units go largest first, each at most once (1h30m, not 30m1h)"},
      {"1h1h", "units go largest first, each at most once (1h30m, not 30m1h)"},
      {"1s1m", "units go largest first, each at most once (1h30m, not 30m1h)"},
      {"2m30", "missing unit"},
      {"1h 30m", "unknown unit"},
      {"1h-30m", "unknown unit"},
      {"1h30x", "unknown unit"},
      {"1h.", "not a number"},
      {"1h1.2.3s", "not a number"},
  };
  for (const auto& c : kCases) {
    auto r = ParseDuration(c.text);
    ASSERT_FALSE(r.has_value()) << c.text;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.error().message(), std::string("invalid duration '") + c.text + "': " + c.why +
                                       " (examples: 250ms, 10s, 5m, 2h, 1h30m)");
  }
}

TEST(ParseDuration, RefusesMoreThanAYearAndNeverOverflows) {
  EXPECT_EQ(kMaxDuration, Millis(31'536'000'000));
  EXPECT_EQ(ParseDuration("365d").value(), kMaxDuration);
  EXPECT_EQ(ParseDuration("8760h").value(), kMaxDuration);
  EXPECT_EQ(ParseDuration("364d23h59m59s1000ms").value(), kMaxDuration);
  EXPECT_EQ(ParseDuration("31536000000ms").value(), kMaxDuration);
  EXPECT_EQ(ParseDuration("364.9999999999d").value(), kMaxDuration);  // rounds to the limit
  for (const char* bad : {"366d", "365d1ms", "8761h", "31536000001ms", "364d24h1ms",
                          "365.00000002d", "99999999999999999999999999999s",
                          "9223372036854775807ms", "9223372036854775808ms",
                          "106751991167d", "2562047788015h", "1d99999999999999999999h",
                          "365d23h59m59s999ms"}) {
    auto r = ParseDuration(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find("longer than the limit, 365d"), std::string::npos)
        << r.error().message();
  }
}

TEST(FormatDuration, ReadsBackUpToTheLimit) {
  for (const Millis d : {Millis(0), Millis(1), Millis(5'400'000), kMaxDuration,
                         kMaxDuration - Millis(1)}) {
    auto back = ParseDuration(FormatDuration(d));
    ASSERT_TRUE(back.has_value()) << FormatDuration(d);
    EXPECT_EQ(*back, d);
  }
}

TEST(FormatTime, Rfc3339WithMillis) {
  EXPECT_EQ(FormatTime(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatTime(1'700'000'000'123), "2023-11-14T22:13:20.123Z");
}

TEST(SelfFence, AlwaysBeforeTheLeaseRunsOut) {
  EXPECT_EQ(SelfFenceAfter(Millis(10'000), Millis(1'000)), Millis(7'500));
  EXPECT_EQ(SelfFenceAfter(Millis(2'000), Millis(1'000)), Millis(500));
  EXPECT_LT(SelfFenceAfter(Millis(100), Millis(1'000)), Millis(100));
  EXPECT_TRUE(ShouldSelfFence(8'000, 0, Millis(10'000), Millis(1'000)));
  EXPECT_FALSE(ShouldSelfFence(7'000, 0, Millis(10'000), Millis(1'000)));
}

TEST(SelfFence, ShortJobLeaseGetsFasterHeartbeats) {
  // A 2 s per-job lease on a worker beating every 1 s: beat every 666 ms,
  // fence after 1 s without one (not after 0.5 s, which one late beat hits).
  EXPECT_EQ(HeartbeatFor(Millis(2'000), Millis(1'000)), Millis(666));
  EXPECT_EQ(HeartbeatFor(Millis(30'000), Millis(1'000)), Millis(1'000));
  EXPECT_FALSE(ShouldSelfFence(900, 0, Millis(2'000), Millis(1'000)));
  EXPECT_TRUE(ShouldSelfFence(1'100, 0, Millis(2'000), Millis(1'000)));
}

}  // namespace
}  // namespace warden
