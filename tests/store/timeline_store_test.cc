// What a job's recovery timeline reads, on every backend: each lost
// attempt keeps how its loss was found (LossCause) and every failed
// attempt when the job could run again; the writes fencing refused are
// found by job; operators' actions on a job (one-job and bulk, fresh
// retries dropping the checkpoint) are kept with it.
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

// Issue 35 section 6: who retried, ran now or cancelled a job, alone or by
// a bulk operation, with the job's end as the action found it (a retry
// clears it from the row); a fresh retry drops the checkpoint.
TEST_P(TimelineStoreTest, OperatorsActionsAreKeptWithTheJobBulkOnesToo) {
  JobSpec s = Spec();
  s.max_attempts = 1;
  const JobId id = Add(s);
  const WorkerId w = RegisterWorker("a");
  auto die = [&] {
    auto claimed = Claim(w, 1);
    ASSERT_EQ(claimed.size(), 1u);
    const JobRef ref{id, claimed[0].lease_token};
    ASSERT_TRUE(store_->JobCheckpoint(ref, Json{{"i", 3}}).value());
    JobOutcome fail{ref, false, Json(), {}};
    fail.error.kind = ErrorKind::kError;
    ASSERT_EQ(store_->JobFinishMany(w, std::span(&fail, 1)).value(), std::vector<bool>{true});
    ASSERT_EQ(store_->JobGet(id)->state, JobState::kDead);
  };
  die();
  const TimeMs died_at = *store_->JobGet(id)->finished_at;
  clock_.Advance(seconds(5));
  ASSERT_TRUE(store_->JobRetry(id, {}, AuditEntry{0, 0, "cli:a", "job.retry", "1", 1}).ok());
  EXPECT_EQ(store_->JobGet(id)->checkpoint, (Json{{"i", 3}})) << "a plain retry keeps it";
  die();
  clock_.Advance(seconds(5));
  auto op = store_->BulkOpCreate(BulkAction::kRetry, JobFilter{}, "token:ops", {true});
  ASSERT_TRUE(op.has_value()) << op.error().ToString();
  EXPECT_TRUE(op->fresh);
  EXPECT_TRUE(store_->BulkOpGet(op->id).value().fresh) << "kept for the runner that takes it";
  ASSERT_TRUE(store_->BulkOpClaim("r", seconds(10), op->id).value().has_value());
  BulkOp done = *op;
  while (done.state == BulkState::kRunning) {
    done = store_->BulkOpStep(done.id, "r", 10, seconds(10)).value();
  }
  EXPECT_EQ(done.done, 1);
  EXPECT_TRUE(store_->JobGet(id)->checkpoint.is_null()) << "a fresh retry drops it";
  ASSERT_TRUE(store_->JobCancel(id, AuditEntry{0, 0, "cli:b", "job.cancel", "1", 1}).has_value());

  auto actions = store_->JobActions(id);
  ASSERT_TRUE(actions.has_value()) << actions.error().ToString();
  ASSERT_EQ(actions->size(), 3u);
  const JobActionInfo& first = (*actions)[0];
  EXPECT_EQ(first.action, "retry");
  EXPECT_EQ(first.actor, "cli:a");
  EXPECT_EQ(first.op, 0);
  EXPECT_FALSE(first.fresh);
  EXPECT_EQ(first.from, JobState::kDead);
  EXPECT_EQ(first.finished_at, died_at);
  EXPECT_EQ(first.last_error, ErrorKind::kError);
  EXPECT_EQ(first.charged, 1);
  EXPECT_EQ(first.max_attempts, 1);
  EXPECT_EQ(first.at, died_at + 5'000);
  const JobActionInfo& bulk = (*actions)[1];
  EXPECT_EQ(bulk.action, "retry");
  EXPECT_EQ(bulk.actor, "token:ops");
  EXPECT_EQ(bulk.op, op->id);
  EXPECT_TRUE(bulk.fresh);
  EXPECT_EQ(bulk.from, JobState::kDead);
  EXPECT_EQ((*actions)[2].action, "cancel");
  EXPECT_EQ((*actions)[2].from, JobState::kAvailable);
  EXPECT_FALSE((*actions)[2].finished_at.has_value());

  // Deleted with the job.
  ASSERT_TRUE(store_->JobDelete(id, AuditEntry{0, 0, "cli:b", "job.delete", "1", 1}).ok());
  EXPECT_TRUE(store_->JobActions(id).value().empty());

  // A retry refused (another live job holds its unique key) leaves no row.
  JobSpec keyed = Spec();
  keyed.unique_key = "k";
  const JobId old = Add(keyed);
  ASSERT_TRUE(store_->JobCancel(old, AuditEntry{0, 0, "cli:b", "job.cancel", "x", 1}).has_value());
  ASSERT_GT(Add(keyed), old);
  auto refused = store_->BulkOpCreate(BulkAction::kRetry, JobFilter{}, "cli:c", {});
  ASSERT_TRUE(store_->BulkOpClaim("r", seconds(10), refused->id).value().has_value());
  done = *refused;
  while (done.state == BulkState::kRunning) {
    done = store_->BulkOpStep(done.id, "r", 10, seconds(10)).value();
  }
  EXPECT_EQ(done.skipped, 1);
  EXPECT_EQ(store_->JobActions(old).value().size(), 1u) << "its cancel only";
}

// An operator's release of a worker shows on each job it took, by whom; a
// death proven by maintenance (no audit entry) is no operator's action.
TEST_P(TimelineStoreTest, AnOperatorsReleaseIsKeptWithEachJobItTook) {
  const WorkerId w = RegisterWorker("a");
  const JobRef ref = Running(w);
  const AuditEntry audit{0, 0, "cli:root", "worker.release", "a", 0};
  ASSERT_TRUE(store_->WorkerDeclareDead(w, "released", LossCause::kOperator, &audit).has_value());
  auto actions = store_->JobActions(ref.id).value();
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].action, "release");
  EXPECT_EQ(actions[0].actor, "cli:root");
  EXPECT_EQ(actions[0].from, JobState::kRunning);
  EXPECT_EQ(actions[0].op, 0);

  const WorkerId b = RegisterWorker("b");
  const JobRef proven = Running(b);
  ASSERT_TRUE(
      store_->WorkerDeclareDead(b, "process gone", LossCause::kProvenDeath, nullptr).has_value());
  EXPECT_TRUE(store_->JobActions(proven.id).value().empty());
}

INSTANTIATE_TEST_SUITE_P(AllBackends, TimelineStoreTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace warden::testing
