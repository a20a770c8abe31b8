#include "core/retry.h"

#include <gtest/gtest.h>

namespace warden {
namespace {

FailureInput Input(ErrorKind kind) {
  FailureInput in;
  in.kind = kind;
  in.max_attempts = 3;
  return in;
}

TEST(DecideFailure, ErrorRetriesWithGrowingBackoffUntilMaxAttempts) {
  FailureInput in = Input(ErrorKind::kError);
  FailureDecision d = DecideFailure(in, 0.0);
  EXPECT_EQ(d.next, JobState::kRetryable);
  EXPECT_TRUE(d.charge);
  EXPECT_FALSE(d.count_crash);
  EXPECT_EQ(d.delay, Millis(500));
  in.charged = 1;
  EXPECT_EQ(DecideFailure(in, 0.999).delay.count(), 1999);
  in.charged = 2;
  d = DecideFailure(in, 0.0);
  EXPECT_EQ(d.next, JobState::kDead);
  EXPECT_EQ(d.kind, ErrorKind::kError);
}

TEST(DecideFailure, PoliciesNoneAndForever) {
  FailureInput in = Input(ErrorKind::kTimeout);
  in.retry = RetryPolicy::kNone;
  EXPECT_EQ(DecideFailure(in, 0.5).next, JobState::kDead);
  in.retry = RetryPolicy::kForever;
  in.charged = 1000;
  EXPECT_EQ(DecideFailure(in, 0.5).next, JobState::kRetryable);
}

TEST(DecideFailure, BackoffIsCapped) {
  BackoffPolicy p;
  EXPECT_EQ(Backoff(100, p, 1.0), p.cap);
  EXPECT_EQ(Backoff(100, p, 0.0), p.cap / 2);
}

TEST(DecideFailure, FirstLossRetriesAtOnceLaterLossesBackOff) {
  FailureInput in = Input(ErrorKind::kLost);
  in.lost_by = LossCause::kProvenDeath;
  FailureDecision d = DecideFailure(in, 0.7);
  EXPECT_EQ(d.next, JobState::kRetryable);
  EXPECT_EQ(d.delay, Millis(0));
  EXPECT_TRUE(d.count_crash);
  in.crashes = 1;
  in.charged = 1;
  EXPECT_GT(DecideFailure(in, 0.7).delay, Millis(0));
}

TEST(DecideFailure, OnlyALossWhoseWorkerIsGoneCountsAsACrash) {
  // The job may have taken its worker down: the crash budget counts it.
  FailureInput in = Input(ErrorKind::kLost);
  in.retry = RetryPolicy::kForever;
  in.crashes = 2;
  for (LossCause gone : {LossCause::kProvenDeath, LossCause::kOperator}) {
    in.lost_by = gone;
    const FailureDecision d = DecideFailure(in, 0.5);
    EXPECT_TRUE(d.count_crash) << LossCauseName(gone);
    EXPECT_EQ(d.kind, ErrorKind::kCrashLoop) << LossCauseName(gone);
  }
  // Its worker may live: a lease that ran out unrenewed (frozen, cut off,
  // starved by a slow store), a worker's own stop when it could no longer
  // prove its lease (self-fenced: lost_by unset), a worker that stopped
  // holding it. An attempt, retried at once, never a crash: three of them
  // in a row on a slow store quarantined healthy jobs (issue 37).
  in.retry = RetryPolicy::kDefault;
  in.max_attempts = 5;
  in.charged = 2;
  for (std::optional<LossCause> alive : {std::optional<LossCause>(LossCause::kLeaseExpiry),
                                         std::optional<LossCause>(),
                                         std::optional<LossCause>(LossCause::kWorkerStop)}) {
    in.lost_by = alive;
    in.crashes = 0;
    FailureDecision d = DecideFailure(in, 0.5);
    EXPECT_FALSE(d.count_crash);
    EXPECT_TRUE(d.charge);
    EXPECT_EQ(d.next, JobState::kRetryable);
    EXPECT_EQ(d.delay, Millis(0));
    // The attempts still bound it.
    in.charged = 4;
    d = DecideFailure(in, 0.5);
    EXPECT_EQ(d.next, JobState::kDead);
    EXPECT_EQ(d.kind, ErrorKind::kLost);
    in.charged = 2;
  }
}

TEST(DecideFailure, CrashBudgetQuarantines) {
  FailureInput in = Input(ErrorKind::kCrash);
  in.retry = RetryPolicy::kForever;
  in.crashes = 2;
  const FailureDecision d = DecideFailure(in, 0.5);
  EXPECT_EQ(d.next, JobState::kDead);
  EXPECT_EQ(d.kind, ErrorKind::kCrashLoop);
}

TEST(DecideFailure, ReleasedIsFreeAndImmediate) {
  FailureInput in = Input(ErrorKind::kReleased);
  in.charged = 2;
  const FailureDecision d = DecideFailure(in, 0.5);
  EXPECT_EQ(d.next, JobState::kAvailable);
  EXPECT_FALSE(d.charge);
  EXPECT_EQ(d.delay, Millis(0));
}

TEST(DecideFailure, AtMostOnceBeforeAndAfterStart) {
  FailureInput in = Input(ErrorKind::kLost);
  in.delivery = Delivery::kAtMostOnce;
  FailureDecision d = DecideFailure(in, 0.5);
  EXPECT_EQ(d.next, JobState::kAvailable);
  EXPECT_FALSE(d.charge);
  in.started_mark = true;
  for (ErrorKind k : {ErrorKind::kError, ErrorKind::kCrash, ErrorKind::kTimeout,
                      ErrorKind::kLost, ErrorKind::kReleased}) {
    in.kind = k;
    d = DecideFailure(in, 0.5);
    EXPECT_EQ(d.next, JobState::kDead) << ErrorKindName(k);
    EXPECT_EQ(d.kind, k);
  }
}

TEST(DecideFailure, CancelEndsTheJob) {
  EXPECT_EQ(DecideFailure(Input(ErrorKind::kCancelled), 0.5).next, JobState::kCancelled);
}

}  // namespace
}  // namespace warden
