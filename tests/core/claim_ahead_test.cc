#include "core/claim_ahead.h"
#include "core/held_bound.h"

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

// A worker holds at most its slots, the claim-ahead cap and two batches of
// outcomes waiting for their commit (core/held_bound.h).
TEST(HeldBound, IsSlotsPlusClaimAheadPlusTwoBatches) {
  EXPECT_EQ(HeldBound(8), 8 + 32 + 1024);
  EXPECT_EQ(HeldBound(1), 1 + 4 + 1024);
  EXPECT_EQ(HeldBound(512), 512 + 32 + 1024);
  EXPECT_EQ(HeldBound(2000), 2000 + 32 + 2000);
}

TEST(ClaimRoom, IsTheFreeSlotsAndAheadWhileFewOutcomesWait) {
  EXPECT_EQ(ClaimRoom(8, 40, 0, 0), 40);
  EXPECT_EQ(ClaimRoom(8, 40, 30, 900), 10);
  EXPECT_EQ(ClaimRoom(8, 40, 40, 0), 0);
}

TEST(ClaimRoom, ShrinksOnceTheOutcomesWaitingPassTheirAllowance) {
  EXPECT_EQ(ClaimRoom(8, 40, 0, 1000), 40);
  EXPECT_EQ(ClaimRoom(8, 40, 0, 1042), 40 + 1024 - 1042);
  EXPECT_EQ(ClaimRoom(8, 40, 10, 1042), 12);
  EXPECT_LE(ClaimRoom(8, 40, 0, 1064), 0);
  EXPECT_LT(ClaimRoom(8, 40, 0, 20'000), 0);
  // Whatever it claims, held + unsettled stays within the bound.
  for (int held = 0; held <= 40; held += 5) {
    for (int64_t unsettled = 0; unsettled < 2000; unsettled += 37) {
      const int room = ClaimRoom(8, 40, held, unsettled);
      if (room > 0) {
        EXPECT_LE(held + unsettled + room, HeldBound(8));
      }
    }
  }
}

}  // namespace
}  // namespace warden
