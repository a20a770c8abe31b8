#include "core/silence.h"

#include <gtest/gtest.h>

namespace warden {
namespace {

constexpr Renewable kLease = Renewable::kLease;

TEST(SilenceJudgeTest, ARowIsSilentOnlyOnceSeenUnchangedForItsLength) {
  SilenceJudge judge;
  judge.BeginPass(1000);
  EXPECT_EQ(judge.Unchanged(kLease, 7, /*version=*/500, /*holder=*/1), Millis(0));
  judge.EndPass();
  judge.BeginPass(4000);
  EXPECT_EQ(judge.Unchanged(kLease, 7, 500, 1), Millis(3000));
  EXPECT_EQ(judge.Unchanged(kLease, 7, 500, 1), Millis(3000)) << "asking twice changes nothing";
  judge.EndPass();
}

TEST(SilenceJudgeTest, ARenewalOrANewHolderStartsAfresh) {
  SilenceJudge judge;
  judge.BeginPass(0);
  judge.Unchanged(kLease, 7, 500, 1);
  judge.EndPass();
  judge.BeginPass(9000);
  // Any new value is a renewal, earlier or later: a wall clock stepped back
  // writes an earlier one.
  EXPECT_EQ(judge.Unchanged(kLease, 7, -3'600'000, 1), Millis(0));
  judge.EndPass();
  judge.BeginPass(12'000);
  EXPECT_EQ(judge.Unchanged(kLease, 7, -3'600'000, 2), Millis(0)) << "a new lease token";
  judge.EndPass();
  judge.BeginPass(15'000);
  EXPECT_EQ(judge.Unchanged(kLease, 7, -3'600'000, 2), Millis(3000));
  judge.EndPass();
}

TEST(SilenceJudgeTest, KindsAreJudgedApart) {
  SilenceJudge judge;
  judge.BeginPass(0);
  judge.Unchanged(Renewable::kHeartbeat, 7, 500);
  judge.EndPass();
  judge.BeginPass(5000);
  EXPECT_EQ(judge.Unchanged(Renewable::kHeartbeat, 7, 500), Millis(5000));
  EXPECT_EQ(judge.Unchanged(kLease, 7, 500), Millis(0)) << "job 7 is not worker 7";
  judge.EndPass();
}

TEST(SilenceJudgeTest, ARowMissingFromAPassStartsAfreshWhenItReturns) {
  SilenceJudge judge;
  judge.BeginPass(0);
  judge.Unchanged(kLease, 7, 500, 1);
  judge.EndPass();
  judge.BeginPass(1000);
  judge.EndPass();  // job 7 was not running at this pass
  judge.BeginPass(20'000);
  EXPECT_EQ(judge.Unchanged(kLease, 7, 500, 1), Millis(0));
  judge.EndPass();
}

}  // namespace
}  // namespace warden
