// The operator surface's store methods, on every backend: pausing a queue
// stops its claims (and only its), tokens are found by id and live until
// revoked, and every action lands in the audit log with its count.
#include <gtest/gtest.h>

#include "store_fixture.h"

namespace warden::testing {
namespace {

class OperatorStoreTest : public StoreTest {
 protected:
  static AuditEntry By(const std::string& action, const std::string& target) {
    return AuditEntry{0, 0, "cli:test", action, target, 0};
  }
  JobId AddTo(const std::string& queue) {
    JobSpec s = Spec();
    s.queue = queue;
    return Add(s);
  }
  std::vector<JobInfo> ClaimFrom(WorkerId w, std::vector<std::string> queues) {
    ClaimParams p;
    p.worker = w;
    p.queues = std::move(queues);
    p.tasks = {"t"};
    p.limit = 10;
    auto claimed = store_->JobClaim(p);
    if (!claimed.has_value()) {
      ADD_FAILURE() << claimed.error().ToString();
      return {};
    }
    return *claimed;
  }
};

TEST_P(OperatorStoreTest, APausedQueueIsNotClaimedFromUntilResumed) {
  const WorkerId w = RegisterWorker();
  const JobId a = AddTo("a");
  const JobId b = AddTo("b");
  EXPECT_TRUE(store_->QueueSetPaused("a", true, By("queue.pause", "a")).value());
  EXPECT_FALSE(store_->QueueSetPaused("a", true, By("queue.pause", "a")).value())
      << "pausing a paused queue changes nothing";

  // Named alone, in a merged claim of several queues, and as every queue.
  EXPECT_TRUE(ClaimFrom(w, {"a"}).empty());
  const auto merged = ClaimFrom(w, {"a", "b"});
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].id, b);
  EXPECT_TRUE(ClaimFrom(w, {}).empty()) << "b is running; a is paused";

  // Another connection (another process) sees the pause too.
  auto other = OpenAnother();
  ClaimParams p;
  p.worker = w;
  p.queues = {"a"};
  p.tasks = {"t"};
  EXPECT_TRUE(other->JobClaim(p).value().empty());

  EXPECT_TRUE(store_->QueueSetPaused("a", false, By("queue.resume", "a")).value());
  EXPECT_FALSE(store_->QueueSetPaused("a", false, By("queue.resume", "a")).value());
  const auto resumed = ClaimFrom(w, {"a"});
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(resumed[0].id, a);
}

TEST_P(OperatorStoreTest, PausingLeavesRunningJobsToFinish) {
  const WorkerId w = RegisterWorker();
  const JobId id = AddTo("default");
  auto claimed = Claim(w);
  ASSERT_EQ(claimed.size(), 1u);
  ASSERT_TRUE(store_->QueueSetPaused("default", true, By("queue.pause", "default")).value());
  JobOutcome ok;
  ok.ref = JobRef{id, claimed[0].lease_token};
  ok.success = true;
  EXPECT_EQ(store_->JobFinishMany(w, std::span(&ok, 1)).value(), std::vector<bool>{true});
  EXPECT_EQ(store_->JobGet(id).value().state, JobState::kSucceeded);
}

TEST_P(OperatorStoreTest, QueuesListCountsByStateOldestAvailableAndPauses) {
  const WorkerId w = RegisterWorker();
  clock_.Advance(Millis(1000));
  const TimeMs first = clock_.NowMs();
  AddTo("default");
  clock_.Advance(Millis(1000));
  AddTo("default");
  AddTo("default");
  ASSERT_EQ(Claim(w, 1).size(), 1u);
  ASSERT_TRUE(store_->QueueSetPaused("empty", true, By("queue.pause", "empty")).value());

  const std::vector<QueueInfo> queues = store_->QueueList().value();
  ASSERT_EQ(queues.size(), 2u);
  EXPECT_EQ(queues[0].name, "default");
  EXPECT_FALSE(queues[0].paused);
  EXPECT_EQ(queues[0].CountIn(JobState::kAvailable), 2);
  EXPECT_EQ(queues[0].CountIn(JobState::kRunning), 1);
  EXPECT_EQ(queues[0].CountIn(JobState::kDead), 0);
  ASSERT_TRUE(queues[0].oldest_available_at.has_value());
  EXPECT_GT(*queues[0].oldest_available_at, first) << "the oldest was claimed";
  EXPECT_EQ(queues[1].name, "empty");
  EXPECT_TRUE(queues[1].paused);
  EXPECT_TRUE(queues[1].jobs.empty());
  EXPECT_FALSE(queues[1].oldest_available_at.has_value());
}

TEST_P(OperatorStoreTest, APauseAndAKeyHolderAreFoundDirectly) {
  EXPECT_FALSE(store_->QueuePausedAt("q").value().has_value());
  clock_.Advance(Millis(250));
  ASSERT_TRUE(store_->QueueSetPaused("q", true, By("queue.pause", "q")).value());
  EXPECT_EQ(store_->QueuePausedAt("q").value(), clock_.NowMs());
  EXPECT_FALSE(store_->QueuePausedAt("other").value().has_value());

  const WorkerId w = RegisterWorker();
  JobSpec keyed = Spec();
  keyed.concurrency_key = "acct-1";
  const JobId first = Add(keyed);
  const JobId second = Add(keyed);
  EXPECT_FALSE(store_->JobHoldingKey("acct-1").value().has_value()) << "none running yet";
  ASSERT_EQ(Claim(w).size(), 1u) << "one per key";
  EXPECT_EQ(store_->JobHoldingKey("acct-1").value(), first);
  EXPECT_FALSE(store_->JobHoldingKey("acct-2").value().has_value());
  EXPECT_EQ(store_->JobGet(second).value().state, JobState::kAvailable);
}

TEST_P(OperatorStoreTest, TokensAreFoundByIdUntilRevoked) {
  TokenInfo t;
  t.name = "ci";
  t.scope = Scope::kOperate;
  auto made = store_->TokenInsert(t, std::nullopt, "hash-1", By("token.create", "ci"));
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  EXPECT_GT(made->id, 0);
  EXPECT_EQ(store_->TokenInsert(t, std::nullopt, "hash-2", By("token.create", "ci")).error().code(),
            StatusCode::kFailedPrecondition)
      << "one live token per name";

  auto found = store_->TokenFind(made->id);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->info.name, "ci");
  EXPECT_EQ(found->info.scope, Scope::kOperate);
  EXPECT_EQ(found->hash, "hash-1");
  EXPECT_FALSE(found->info.expires_at.has_value());
  EXPECT_FALSE(found->info.last_used_at.has_value());
  EXPECT_EQ(store_->TokenFind(made->id + 1).error().code(), StatusCode::kNotFound);

  auto revoked = store_->TokenRevoke(std::to_string(made->id), By("token.revoke", "ci"));
  ASSERT_TRUE(revoked.has_value()) << revoked.error().ToString();
  EXPECT_TRUE(revoked->revoked_at.has_value());
  EXPECT_EQ(store_->TokenFind(made->id).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->TokenRevoke("ci", By("token.revoke", "ci")).error().code(),
            StatusCode::kNotFound);

  // The name is free again; the list keeps the revoked one.
  auto again = store_->TokenInsert(t, std::nullopt, "hash-3", By("token.create", "ci"));
  ASSERT_TRUE(again.has_value());
  EXPECT_NE(again->id, made->id);
  const auto all = store_->TokenList().value();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(all[0].revoked_at.has_value());
  EXPECT_FALSE(all[1].revoked_at.has_value());
  EXPECT_EQ(store_->TokenRevoke("ci", By("token.revoke", "ci")).value().id, again->id);
}

// Schema 16 (SQLite) / 19 (PostgreSQL): a token's expiry, set from its
// creation on the store's clock, and its last use, which only moves later.
TEST_P(OperatorStoreTest, ATokenKeepsItsExpiryAndItsLastUse) {
  TokenInfo t;
  t.name = "bot";
  auto made = store_->TokenInsert(t, Millis(3'600'000), "hash", By("token.create", "bot"));
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  ASSERT_TRUE(made->expires_at.has_value());
  EXPECT_EQ(*made->expires_at, made->created_at + 3'600'000);
  clock_.Advance(Millis(2'000));
  auto found = store_->TokenFind(made->id);
  ASSERT_TRUE(found.has_value()) << found.error().ToString();
  EXPECT_EQ(found->info.expires_at, made->expires_at);
  EXPECT_EQ(found->now, made->created_at + 2'000) << "the store's clock";

  ASSERT_TRUE(store_->TokenTouch(made->id, found->now).ok());
  EXPECT_EQ(store_->TokenFind(made->id).value().info.last_used_at, found->now);
  ASSERT_TRUE(store_->TokenTouch(made->id, found->now - 500).ok());
  EXPECT_EQ(store_->TokenFind(made->id).value().info.last_used_at, found->now)
      << "a late writer does not move it back";
  const auto all = store_->TokenList().value();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].last_used_at, found->now);
  EXPECT_EQ(all[0].expires_at, made->expires_at);
}

TEST_P(OperatorStoreTest, TheAuditLogKeepsEveryActionNewestFirst) {
  ASSERT_TRUE(store_->QueueSetPaused("q", true, By("queue.pause", "q")).value());
  ASSERT_FALSE(store_->QueueSetPaused("q", true, By("queue.pause", "q")).value());
  clock_.Advance(Millis(5));
  const JobId dead = Add(Spec());
  ASSERT_EQ(store_->JobCancel(dead, By("job.cancel", std::to_string(dead))).value(),
            JobState::kCancelled);
  ASSERT_TRUE(store_->JobRetry(dead, {},
                               AuditEntry{0, 0, "token:ops", "job.retry", std::to_string(dead), 0})
                  .ok());
  // Refused: no entry (an entry says the action happened).
  EXPECT_FALSE(store_->JobRetry(dead + 100, {}, By("job.retry", "none")).ok());
  EXPECT_FALSE(store_->JobCancel(dead + 100, By("job.cancel", "none")).has_value());

  auto log = store_->AuditList(10, 0).value();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].action, "job.retry");
  EXPECT_EQ(log[0].actor, "token:ops");
  EXPECT_EQ(log[0].target, std::to_string(dead));
  EXPECT_EQ(log[0].count, 1);
  EXPECT_EQ(log[0].at, clock_.NowMs());
  EXPECT_EQ(log[1].action, "job.cancel");
  EXPECT_EQ(log[1].count, 1);
  log.erase(log.begin(), log.begin() + 1);
  EXPECT_EQ(log[1].action, "queue.pause");
  EXPECT_EQ(log[1].count, 0) << "the second pause changed nothing";
  EXPECT_EQ(log[2].count, 1);
  EXPECT_GT(log[0].id, log[1].id);

  const auto page = store_->AuditList(1, log[0].id).value();  // before the cancel
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0].id, log[1].id);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, OperatorStoreTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace warden::testing
