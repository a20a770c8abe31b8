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
  for (const char* bad : {"", "10", "s", "-1s", "10x", "1.2.3s", "ms10", "99999999999999d"}) {
    auto r = ParseDuration(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find("examples"), std::string::npos);
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
