#include "core/claim_ahead.h"

#include <gtest/gtest.h>

namespace warden {
namespace {

TEST(ClaimAhead, NothingUntilBothTimesAreKnown) {
  EXPECT_EQ(ClaimAhead(8, 0, 50), 0);
  EXPECT_EQ(ClaimAhead(8, 1000, 0), 0);
  EXPECT_EQ(ClaimAhead(0, 1000, 50), 0);
}

TEST(ClaimAhead, CoversWhatTheSlotsFinishDuringOneClaim) {
  // 8 slots, a 1 ms claim, 0.5 ms jobs: each slot finishes two meanwhile.
  EXPECT_EQ(ClaimAhead(8, 1000, 500), 16);
  EXPECT_EQ(ClaimAhead(8, 1000, 4000), 2);
}

TEST(ClaimAhead, JobsAsLongAsAClaimPerSlotOrLongerGetNone) {
  EXPECT_EQ(ClaimAhead(8, 1000, 8001), 0);
  EXPECT_EQ(ClaimAhead(1, 1000, 60'000'000), 0);
}

TEST(ClaimAhead, IsCappedPerSlotAndInAll) {
  EXPECT_EQ(ClaimAhead(2, 1000, 1), 2 * kClaimAheadPerSlot);
  EXPECT_EQ(ClaimAhead(512, 1000, 1), kClaimAheadMax);
}

TEST(Smooth, StartsAtTheFirstSampleThenMovesAnEighthOfTheWay) {
  EXPECT_EQ(Smooth(0, 100), 100);
  EXPECT_EQ(Smooth(100, 180), 110);
}

}  // namespace
}  // namespace warden
