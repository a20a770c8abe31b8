#include "core/lost_claims.h"

#include <gtest/gtest.h>

namespace warden {
namespace {

using Held = std::unordered_map<JobId, int64_t>;

HeartbeatStart Start(std::unordered_set<JobId> known = {},
                     std::optional<int64_t> claim_sent = std::nullopt) {
  return HeartbeatStart{std::move(known), claim_sent};
}

TEST(LostClaimDetector, OneSightingIsNeverEnough) {
  LostClaimDetector d;
  EXPECT_TRUE(d.Judge(Start(), Held{{7, 1}}, 100).empty());
}

TEST(LostClaimDetector, TwoSightingsWithNoClaimInFlightAreALostClaim) {
  LostClaimDetector d;
  EXPECT_TRUE(d.Judge(Start(), Held{{7, 1}}, 100).empty());
  EXPECT_EQ(d.Judge(Start(), Held{{7, 1}}, 200), std::vector<JobId>{7});
  // Judged once: the next pair of sightings starts afresh.
  EXPECT_TRUE(d.Judge(Start(), Held{{7, 1}}, 300).empty());
}

TEST(LostClaimDetector, AClaimSentBeforeTheFirstSightingMayStillDeliverTheJob) {
  LostClaimDetector d;
  // The claim went out at 90, committed, and its reply is slow.
  EXPECT_TRUE(d.Judge(Start({}, 90), Held{{7, 1}}, 100).empty());
  EXPECT_TRUE(d.Judge(Start({}, 90), Held{{7, 1}}, 200).empty());
  EXPECT_TRUE(d.Judge(Start({}, 100), Held{{7, 1}}, 300).empty()) << "same millisecond";
  // That claim ended without delivering it; the one in flight now was sent
  // after the job was first listed, so it cannot be the one that took it.
  EXPECT_EQ(d.Judge(Start({}, 250), Held{{7, 1}}, 400), std::vector<JobId>{7});
}

// The false alarm CI found: heartbeat 1 reads the store while the job's claim
// reply is on its way; heartbeat 2 reads before the job's outcome commits and
// is processed after it did. Neither heartbeat started with the job unknown
// and no claim able to deliver it.
TEST(LostClaimDetector, AJobThatRanBetweenAReadAndItsProcessingIsNotLost) {
  LostClaimDetector d;
  EXPECT_TRUE(d.Judge(Start({}, 90), Held{{7, 1}}, 100).empty());
  // Heartbeat 2 started while job 7 ran (or while its outcome waited).
  EXPECT_TRUE(d.Judge(Start({7}), Held{{7, 1}}, 200).empty());
  // Its outcome is written: the store no longer lists it.
  EXPECT_TRUE(d.Judge(Start(), Held{}, 300).empty());
}

TEST(LostClaimDetector, AKnownJobInBetweenBreaksTheSightings) {
  LostClaimDetector d;
  EXPECT_TRUE(d.Judge(Start(), Held{{7, 1}}, 100).empty());
  EXPECT_TRUE(d.Judge(Start({7}), Held{{7, 1}}, 200).empty());
  EXPECT_TRUE(d.Judge(Start(), Held{{7, 1}}, 300).empty());
  EXPECT_EQ(d.Judge(Start(), Held{{7, 1}}, 400), std::vector<JobId>{7});
}

TEST(LostClaimDetector, ANewLeaseTokenIsANewClaim) {
  LostClaimDetector d;
  EXPECT_TRUE(d.Judge(Start(), Held{{7, 1}}, 100).empty());
  EXPECT_TRUE(d.Judge(Start(), Held{{7, 2}}, 200).empty());
  EXPECT_EQ(d.Judge(Start(), Held{{7, 2}}, 300), std::vector<JobId>{7});
}

TEST(LostClaimDetector, OnlyTheUnknownJobsOfAReplyAreJudged) {
  LostClaimDetector d;
  EXPECT_TRUE(d.Judge(Start({1, 2}), Held{{1, 1}, {2, 1}, {3, 1}}, 100).empty());
  EXPECT_EQ(d.Judge(Start({1, 2}), Held{{1, 1}, {2, 1}, {3, 1}}, 200), std::vector<JobId>{3});
}

}  // namespace
}  // namespace warden
