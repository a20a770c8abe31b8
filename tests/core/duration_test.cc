#include "warden/duration.h"

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
  for (const char* bad :
       {"", "10", "s", "-1s", "10x", "1.2.3s", "ms10", "99999999999999d", "1h30"}) {
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
      {"30m1h", "units must go largest first, each once"},
      {"1h1h", "units must go largest first, each once"},
      {"1s1m", "units must go largest first, each once"},
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

TEST(ParseTime, Rfc3339WithAnOffset) {
  EXPECT_EQ(ParseTime("1970-01-01T00:00:00Z").value(), 0);
  EXPECT_EQ(ParseTime("2023-11-14T22:13:20.123Z").value(), 1'700'000'000'123);
  EXPECT_EQ(ParseTime("2023-11-14T23:13:20.123+01:00").value(), 1'700'000'000'123);
  EXPECT_EQ(ParseTime("2023-11-14T17:43:20.123-04:30").value(), 1'700'000'000'123);
  EXPECT_EQ(ParseTime("2023-11-14 22:13:20.1239999z").value(), 1'700'000'000'123);  // truncated
  EXPECT_EQ(ParseTime("2023-11-14t22:13:20.1Z").value(), 1'700'000'000'100);
  EXPECT_EQ(ParseTime("2024-02-29T00:00:00Z").value(), 1'709'164'800'000);  // a leap day
  EXPECT_EQ(ParseTime("1969-12-31T23:59:59Z").value(), -1'000);
  EXPECT_EQ(ParseTime("0001-01-01T00:00:00Z").value(), -62'135'596'800'000);
  EXPECT_EQ(ParseTime("9999-12-31T23:59:59.999Z").value(), 253'402'300'799'999);
  for (const TimeMs t : {TimeMs(0), TimeMs(1'700'000'000'123), TimeMs(1'709'164'800'000),
                         TimeMs(4'102'444'800'000)}) {
    EXPECT_EQ(ParseTime(FormatTime(t)).value(), t) << FormatTime(t);
  }
}

TEST(ParseTime, RefusesWithAClearMessage) {
  const struct {
    const char* text;
    const char* why;
  } kCases[] = {
      {"", "empty"},
      {"tomorrow", "not a date: want YYYY-MM-DD"},
      {"2026-11-26", "missing the time of day: want THH:MM:SS and an offset"},
      {"2026-11-26T09:00:00", "missing the offset: end with Z (UTC) or +HH:MM"},
      {"2026-11-26T09:00Z", "not a time of day: want HH:MM:SS"},
      {"2026-11-26X09:00:00Z", "want T between the date and the time of day"},
      {"2026-13-01T00:00:00Z", "month 13 does not exist"},
      {"2026-02-29T00:00:00Z", "day 29 does not exist in that month"},
      {"2100-02-29T00:00:00Z", "day 29 does not exist in that month"},
      {"2026-04-31T00:00:00Z", "day 31 does not exist in that month"},
      {"2026-11-26T24:00:00Z", "no such time of day"},
      {"2026-11-26T23:59:60Z", "no such time of day"},
      {"2026-11-26T09:00:00.Z", "want digits after the decimal point"},
      {"2026-11-26T09:00:00+0100", "not an offset: want +HH:MM or -HH:MM"},
      {"2026-11-26T09:00:00+24:00", "no such offset"},
      {"2026-11-26T09:00:00 UTC", "want Z or an offset +HH:MM / -HH:MM after the time"},
      {"2026-11-26T09:00:00Zjunk", "unexpected text after the time"},
      {"0000-01-01T00:00:00Z", "year 0000 is out of range"},
      {"+2026-11-26T09:00:00Z", "not a date: want YYYY-MM-DD"},
      {"1732611600", "not a date: want YYYY-MM-DD"},
  };
  for (const auto& c : kCases) {
    auto r = ParseTime(c.text);
    ASSERT_FALSE(r.has_value()) << c.text;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.error().message(),
              std::string("invalid time '") + c.text + "': " + c.why +
                  " (examples: 2026-11-26T09:00:00Z, 2026-11-26T10:00:00+01:00)");
  }
  auto r = ParseTime(std::string("2026-11-26T09:00:00Z\n") + std::string(100, 'x'));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message().find('\n'), std::string::npos);
  EXPECT_LT(r.error().message().size(), 200u);
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
