// What a job's recovery timeline reads, on every backend: each lost
// attempt keeps how its loss was found (LossCause) and every failed
// attempt when the job could run again; the writes fencing refused are
// found by job.
#include <gtest/gtest.h>

#include "store_fixture.h"

namespace warden::testing {
namespace {

using std::chrono::seconds;

class TimelineStoreTest : public StoreTest {
 protected:
  // A job claimed by `w`: its id and lease token.
  JobRef Running(WorkerId w, Millis lease = Millis(10'000)) {
    const JobId id = Add(Spec());
    auto claimed = Claim(w, 1, lease);
    EXPECT_EQ(claimed.size(), 1u);
    return claimed.empty() ? JobRef{id, 0} : JobRef{id, claimed[0].lease_token};
  }
  AttemptInfo Attempt(JobId id, size_t i) {
    auto job = store_->JobGet(id);
    EXPECT_TRUE(job.has_value());
    EXPECT_GT(job->attempts.size(), i);
    return job->attempts.size() > i ? job->attempts[i] : AttemptInfo{};
  }
};

TEST_P(TimelineStoreTest, AProvenDeathIsKeptWithTheAttemptAndTheJobIsRunnableAtOnce) {
  const WorkerId w = RegisterWorker("a");
  const JobRef ref = Running(w);
  ASSERT_TRUE(
      store_->WorkerDeclareDead(w, "process 1 on h is gone", LossCause::kProvenDeath, nullptr)
          .has_value());
  const AttemptInfo a = Attempt(ref.id, 0);
  EXPECT_EQ(a.outcome, "lost");
  EXPECT_EQ(a.lost_by, "proven_death");
  ASSERT_TRUE(a.finished_at && a.runnable_at);
  EXPECT_EQ(*a.runnable_at, *a.finished_at) << "a first loss retries without backoff";
  ASSERT_TRUE(a.error.has_value());
  EXPECT_NE(a.error->message.find("process 1 on h is gone"), std::string::npos);
}

TEST_P(TimelineStoreTest, AnOperatorsReleaseIsNotAProvenDeath) {
  const WorkerId w = RegisterWorker("a");
  const JobRef ref = Running(w);
  ASSERT_TRUE(store_->WorkerDeclareDead(w, "released by an operator", LossCause::kOperator, nullptr)
                  .has_value());
  EXPECT_EQ(Attempt(ref.id, 0).lost_by, "operator");
}

TEST_P(TimelineStoreTest, ALeaseExpiryAndTheLateWriteItFencedAreBothKept) {
  const WorkerId a = RegisterWorker("a");
  const WorkerId b = RegisterWorker("b");
  const JobRef first = Running(a, seconds(5));
  clock_.Advance(seconds(6));
  ASSERT_EQ(store_->JobRescueSilent(store_->JobLeases().value())->rescued, 1);
  EXPECT_EQ(Attempt(first.id, 0).lost_by, "lease_expiry");
  auto second = Claim(b, 1);
  ASSERT_EQ(second.size(), 1u);

  clock_.Advance(seconds(1));
  JobOutcome late{first, true, Json("late"), {}};
  ASSERT_EQ(store_->JobFinishMany(a, std::span(&late, 1)).value(), std::vector<bool>{false});
  JobOutcome fail_late{first, false, Json(), {}};
  fail_late.error.kind = ErrorKind::kError;
  ASSERT_EQ(store_->JobFinishMany(a, std::span(&fail_late, 1)).value(),
            std::vector<bool>{false});

  auto fenced = store_->JobFencedWrites(first.id);
  ASSERT_TRUE(fenced.has_value()) << fenced.error().ToString();
  ASSERT_EQ(fenced->size(), 2u);
  EXPECT_EQ((*fenced)[0].worker, a);
  EXPECT_EQ((*fenced)[0].worker_name, "a");
  EXPECT_EQ((*fenced)[0].lease_token, first.lease_token);
  EXPECT_EQ((*fenced)[0].what, "complete");
  EXPECT_EQ((*fenced)[0].at, clock_.NowMs());
  EXPECT_EQ((*fenced)[1].what, "error");
  EXPECT_TRUE(store_->JobFencedWrites(first.id + 1000).value().empty()) << "another job's";
}

TEST_P(TimelineStoreTest, AShutdownsReleaseAndAStopWhileHoldingAreTheirOwnCauses) {
  const WorkerId w = RegisterWorker("a");
  const JobRef released = Running(w);
  JobOutcome rel{released, false, Json(), {}};
  rel.error.kind = ErrorKind::kReleased;
  ASSERT_EQ(store_->JobFinishMany(w, std::span(&rel, 1)).value(), std::vector<bool>{true});
  const AttemptInfo r = Attempt(released.id, 0);
  EXPECT_EQ(r.lost_by, "release");
  EXPECT_EQ(r.runnable_at, r.finished_at);

  // Claimed again (a released job keeps its place in line), and held by
  // its worker as it stops.
  auto again = Claim(w, 1);
  ASSERT_EQ(again.size(), 1u);
  ASSERT_EQ(again[0].id, released.id);
  ASSERT_TRUE(store_->WorkerStop(w).ok());
  EXPECT_EQ(Attempt(released.id, 1).lost_by, "worker_stop");
}

TEST_P(TimelineStoreTest, AFailureIsRunnableAfterItsBackoffAndAFinalOneNever) {
  JobSpec s = Spec();
  s.max_attempts = 2;
  const JobId id = Add(s);
  const WorkerId w = RegisterWorker("a");
  auto claimed = Claim(w, 1);
  ASSERT_EQ(claimed.size(), 1u);
  JobOutcome fail{JobRef{id, claimed[0].lease_token}, false, Json(), {}};
  fail.error.kind = ErrorKind::kError;
  ASSERT_EQ(store_->JobFinishMany(w, std::span(&fail, 1)).value(), std::vector<bool>{true});
  auto job = store_->JobGet(id);
  ASSERT_EQ(job->state, JobState::kRetryable);
  const AttemptInfo first = job->attempts[0];
  EXPECT_TRUE(first.lost_by.empty()) << "an error is not a loss";
  ASSERT_TRUE(first.runnable_at && first.finished_at);
  EXPECT_EQ(*first.runnable_at, job->run_at) << "the end of its backoff";
  EXPECT_GT(*first.runnable_at, *first.finished_at);

  clock_.Advance(Millis(*first.runnable_at - clock_.NowMs()));
  ASSERT_TRUE(store_->JobPromote().has_value());
  claimed = Claim(w, 1);
  ASSERT_EQ(claimed.size(), 1u);
  fail.ref.lease_token = claimed[0].lease_token;
  ASSERT_EQ(store_->JobFinishMany(w, std::span(&fail, 1)).value(), std::vector<bool>{true});
  EXPECT_EQ(store_->JobGet(id)->state, JobState::kDead);
  EXPECT_FALSE(Attempt(id, 1).runnable_at.has_value()) << "dead: never runnable again";
}

INSTANTIATE_TEST_SUITE_P(AllBackends, TimelineStoreTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace warden::testing
