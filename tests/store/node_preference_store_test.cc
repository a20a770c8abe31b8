// After a loss, another node first (core/node_preference.h), on every
// backend: a job lost or crashed on a node is kept from that node's
// claims for kPreferAnotherNodeFor past the time it may run, but only when
// a claiming worker on another node could run it now; a graceful release,
// a node no other serves, a busy, full or closed other node keep nothing.
#include <gtest/gtest.h>

#include "core/node_preference.h"
#include "store_fixture.h"

namespace warden::testing {
namespace {

class NodePreferenceStoreTest : public StoreTest {
 protected:
  WorkerId WorkerOnNode(const std::string& name, const std::string& node,
                        std::vector<std::string> queues = {"default"}) {
    WorkerRegistration r = TestWorker(name);
    r.node = node;
    r.host = "testhost";
    r.queues = std::move(queues);
    auto id = store_->WorkerRegister(r);
    EXPECT_TRUE(id.has_value()) << id.error().ToString();
    return id.has_value() ? *id : 0;
  }
  std::vector<JobInfo> ClaimOn(WorkerId w, const std::string& node) {
    ClaimParams p;
    p.worker = w;
    p.queues = {"default"};
    p.tasks = {"t"};
    p.node = node;
    auto claimed = store_->JobClaim(p);
    EXPECT_TRUE(claimed.has_value()) << claimed.error().ToString();
    return claimed.has_value() ? *claimed : std::vector<JobInfo>{};
  }
  // Adds a job, has `w` on `node` claim it, and declares `w` dead.
  JobId LoseOn(WorkerId w, const std::string& node) {
    const JobId id = Add(Spec());
    EXPECT_EQ(ClaimOn(w, node).size(), 1u);
    auto rescued = store_->WorkerDeclareDead(w, "killed", LossCause::kProvenDeath, nullptr);
    EXPECT_TRUE(rescued.has_value()) << rescued.error().ToString();
    return id;
  }
  // Has `w` end its attempt of `job` itself, as `kind`.
  void Fail(WorkerId w, const JobInfo& job, ErrorKind kind) {
    JobOutcome o;
    o.ref = JobRef{job.id, job.lease_token};
    o.error.kind = kind;
    o.error.message = ErrorKindName(kind);
    auto done = store_->JobFinishMany(w, std::span(&o, 1));
    ASSERT_TRUE(done.has_value()) << done.error().ToString();
    EXPECT_TRUE((*done)[0]);
  }
  JobInfo Get(JobId id) { return store_->JobGet(id).value(); }
};

TEST_P(NodePreferenceStoreTest, ALossKeepsTheJobFromItsNodeWhileAnotherCanTakeIt) {
  const WorkerId a1 = WorkerOnNode("a1", "n1");
  const WorkerId a2 = WorkerOnNode("a2", "n1");
  const WorkerId b = WorkerOnNode("b", "n2");
  const TimeMs lost_at = clock_.NowMs();
  const JobId id = LoseOn(a1, "n1");

  const JobInfo job = Get(id);
  EXPECT_EQ(job.state, JobState::kRetryable) << "a first loss retries at once";
  EXPECT_EQ(job.avoid_node, "n1");
  ASSERT_TRUE(job.avoid_node_until.has_value());
  EXPECT_EQ(*job.avoid_node_until, lost_at + kPreferAnotherNodeFor.count());

  EXPECT_TRUE(ClaimOn(a2, "n1").empty()) << "the node that lost it claimed it at once";
  const std::vector<JobInfo> taken = ClaimOn(b, "n2");
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].id, id);
}

TEST_P(NodePreferenceStoreTest, TheNodeThatLostItTakesItOnceThePreferenceEnds) {
  const WorkerId a1 = WorkerOnNode("a1", "n1");
  const WorkerId a2 = WorkerOnNode("a2", "n1");
  WorkerOnNode("b", "n2");  // could take it, but does not claim
  const JobId id = LoseOn(a1, "n1");
  EXPECT_TRUE(ClaimOn(a2, "n1").empty());
  clock_.Advance(kPreferAnotherNodeFor - Millis(1));
  EXPECT_TRUE(ClaimOn(a2, "n1").empty());
  clock_.Advance(Millis(1));
  const std::vector<JobInfo> taken = ClaimOn(a2, "n1");
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].id, id);
}

TEST_P(NodePreferenceStoreTest, NothingIsKeptWhenNoOtherNodeCanTakeItNow) {
  // Another node's worker on another queue, one whose slot is taken, one
  // on a disabled node: none could run it, so its own node takes it at
  // once (a one-node fleet recovers as fast as before).
  WorkerOnNode("other-queue", "n2", {"elsewhere"});
  const WorkerId busy = WorkerOnNode("busy", "n3");
  Add(Spec());
  ASSERT_EQ(ClaimOn(busy, "n3").size(), 1u);
  WorkerOnNode("closed", "n4");
  const AuditEntry audit{0, 0, "cli:test", "node.disable", "", 0};
  ASSERT_TRUE(store_->NodeSetEnabled("n4", false, audit).has_value());

  const WorkerId a1 = WorkerOnNode("a1", "n1");
  const WorkerId a2 = WorkerOnNode("a2", "n1");
  const JobId id = LoseOn(a1, "n1");
  const JobInfo job = Get(id);
  EXPECT_EQ(job.avoid_node, "");
  EXPECT_FALSE(job.avoid_node_until.has_value());
  const std::vector<JobInfo> taken = ClaimOn(a2, "n1");
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].id, id);
}

// A node's capacity caps its workers together: an idle worker on a node
// that its other workers fill is no place to send the job.
TEST_P(NodePreferenceStoreTest, AnIdleWorkerOnAFullNodeIsNoPlaceToSendIt) {
  const AuditEntry audit{0, 0, "cli:test", "node.add", "", 0};
  ASSERT_TRUE(store_->NodePut(NodeSpec{"n2", 1}, true, audit).has_value());
  const WorkerId b1 = WorkerOnNode("b1", "n2");
  WorkerOnNode("b2", "n2");  // idle, a free slot of its own
  Add(Spec());
  ASSERT_EQ(ClaimOn(b1, "n2").size(), 1u) << "n2 is now at its capacity of 1";

  const WorkerId a1 = WorkerOnNode("a1", "n1");
  const WorkerId a2 = WorkerOnNode("a2", "n1");
  const JobId full = LoseOn(a1, "n1");
  EXPECT_FALSE(Get(full).avoid_node_until.has_value()) << "n2 is full";
  ASSERT_EQ(ClaimOn(a2, "n1").size(), 1u);

  // With room on n2, the next loss is kept from n1.
  ASSERT_TRUE(store_->NodePut(NodeSpec{"n2", 3}, true, audit).has_value());
  const WorkerId a3 = WorkerOnNode("a3", "n1");
  const JobId room = LoseOn(a3, "n1");
  EXPECT_EQ(Get(room).avoid_node, "n1");
}

TEST_P(NodePreferenceStoreTest, ACrashPrefersAnotherNodeAndAReleaseDoesNot) {
  const WorkerId a = WorkerOnNode("a", "n1");
  WorkerOnNode("b", "n2");

  const JobId released = Add(Spec());
  std::vector<JobInfo> mine = ClaimOn(a, "n1");
  ASSERT_EQ(mine.size(), 1u);
  Fail(a, mine[0], ErrorKind::kReleased);
  EXPECT_FALSE(Get(released).avoid_node_until.has_value()) << "a deploy is not the node's fault";
  mine = ClaimOn(a, "n1");
  ASSERT_EQ(mine.size(), 1u) << "the released job was kept from its node";

  // The crash backs off first: the preference runs from when it may run.
  Fail(a, mine[0], ErrorKind::kCrash);
  const JobInfo crashed = Get(released);
  EXPECT_EQ(crashed.state, JobState::kRetryable);
  EXPECT_EQ(crashed.avoid_node, "n1");
  ASSERT_TRUE(crashed.avoid_node_until.has_value());
  EXPECT_EQ(*crashed.avoid_node_until, crashed.run_at + kPreferAnotherNodeFor.count());

  // An error of the handler's own is not a loss: it keeps nothing, and
  // clears what a loss before it kept.
  clock_.Advance(Millis(crashed.run_at - clock_.NowMs()));
  EXPECT_TRUE(ClaimOn(a, "n1").empty());
  clock_.Advance(kPreferAnotherNodeFor);
  mine = ClaimOn(a, "n1");
  ASSERT_EQ(mine.size(), 1u);
  Fail(a, mine[0], ErrorKind::kError);
  EXPECT_FALSE(Get(released).avoid_node_until.has_value());
}

INSTANTIATE_TEST_SUITE_P(AllBackends, NodePreferenceStoreTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace warden::testing
