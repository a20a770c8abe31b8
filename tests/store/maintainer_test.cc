// The Maintainer (src/maintenance) over each real backend, with the store's
// wall clock stepped under it: silence is judged by watching, so a step of
// any size, either way, neither makes a live worker silent nor hides a
// silent one for longer than its lease and two passes.
#include "maintenance/maintainer.h"

#include <gtest/gtest.h>

#include "store_fixture.h"

namespace warden::testing {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

class MaintainerTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    options_m_.sweep_interval = seconds(1);
    options_m_.lease = seconds(10);
    options_m_.keepalive_threshold = seconds(10);
  }
  // The store's clock steps; the monotonic clocks (the judge's) do not.
  void StepWall(Millis d) { clock_.SetWall(clock_.NowMs() + d.count()); }
  MaintenancePass Pass(Maintainer& m, WorkerId self) {
    MaintenancePass p = m.Pass(self);
    EXPECT_TRUE(p.status.ok()) << p.status.ToString();
    return p;
  }
  WorkerState StateOf(WorkerId id) {
    const std::vector<WorkerInfo> workers = store_->WorkerList(false).value();
    for (const WorkerInfo& w : workers) {
      if (w.id == id) return w.state;
    }
    return WorkerState::kStopped;
  }
  MaintainerOptions options_m_;
  ClockEnv env_{DefaultEnv(), clock_};  // this host's processes, the test's clock
};

TEST_P(MaintainerTest, WallClockStepsNeverMakeAHeartbeatingWorkerSilent) {
  const JobId job = Add(Spec());
  const WorkerId busy = RegisterWorker("busy");
  ASSERT_EQ(Claim(busy, 1).size(), 1u);
  const WorkerId self = RegisterWorker("maintainer");
  Maintainer m(*store_, env_, options_m_);
  ASSERT_TRUE(Pass(m, self).now_leader.value_or(false));
  // A minute of passes, a heartbeat a second, the wall clock stepped by
  // hours forward and back between them.
  const Millis steps[] = {hours(2), -hours(5), hours(24 * 365), -hours(24 * 365), hours(3)};
  for (int second = 0; second < 60; ++second) {
    if (second % 12 == 5) StepWall(steps[second / 12]);
    clock_.Advance(seconds(1));
    ASSERT_TRUE(store_->WorkerHeartbeat(busy).value().alive) << "second " << second;
    ASSERT_TRUE(store_->WorkerHeartbeat(self).value().alive);
    const MaintenancePass p = Pass(m, self);
    ASSERT_TRUE(p.swept.has_value());
    EXPECT_EQ(p.swept->presumed_dead, 0) << "second " << second;
    EXPECT_EQ(p.swept->rescued, 0) << "second " << second;
  }
  EXPECT_EQ(store_->JobGet(job)->state, JobState::kRunning);
  EXPECT_EQ(StateOf(busy), WorkerState::kActive);
}

TEST_P(MaintainerTest, ASilentWorkerIsJudgedAfterItsLeaseWhateverTheClockDid) {
  for (const Millis step : {hours(2), -hours(2)}) {
    SCOPED_TRACE(step.count());
    const JobId job = Add(Spec());
    const WorkerId frozen = RegisterWorker("frozen" + std::to_string(step.count()));
    ASSERT_EQ(Claim(frozen, 1).size(), 1u);
    const WorkerId self = RegisterWorker("maintainer" + std::to_string(step.count()));
    Maintainer m(*store_, env_, options_m_);
    ASSERT_TRUE(store_->WorkerHeartbeat(frozen).value().alive);  // its last
    Pass(m, self);
    StepWall(step);
    int judged_after = -1;
    for (int second = 1; second <= 15 && judged_after < 0; ++second) {
      clock_.Advance(seconds(1));
      ASSERT_TRUE(store_->WorkerHeartbeat(self).value().alive);
      const MaintenancePass p = Pass(m, self);
      if (p.swept && p.swept->rescued > 0) judged_after = second;
    }
    // Seen first at the pass of its last heartbeat, judged 10 s (its lease)
    // of watching later: never early, at most a pass late.
    EXPECT_EQ(judged_after, 10);
    EXPECT_EQ(store_->JobGet(job)->state, JobState::kAvailable) << "lost, retried at once";
    EXPECT_EQ(StateOf(frozen), WorkerState::kDead);
  }
}

TEST_P(MaintainerTest, ANewLeaderJudgesFromTheHeartbeatsItWatchedAsAFollower) {
  const JobId job = Add(Spec());
  const WorkerId frozen = RegisterWorker("frozen");
  ASSERT_EQ(Claim(frozen, 1).size(), 1u);
  const WorkerId a = RegisterWorker("leader");
  const WorkerId b = RegisterWorker("follower");
  Maintainer leader(*store_, env_, options_m_), follower(*store_, env_, options_m_);
  ASSERT_TRUE(store_->WorkerHeartbeat(frozen).value().alive);  // renews its lease too
  ASSERT_TRUE(Pass(leader, a).now_leader.value_or(false));
  EXPECT_FALSE(Pass(follower, b).swept.has_value());
  // The leader and the worker freeze together (one host suspended), and the
  // wall clock steps forward: the follower waits out the leader's ttl (3 s)
  // on its own clock, then judges the frozen worker's lease from the
  // heartbeat it has watched since the start.
  StepWall(hours(1));
  int took_over = -1, judged_after = -1;
  for (int second = 1; second <= 15 && judged_after < 0; ++second) {
    clock_.Advance(seconds(1));
    ASSERT_TRUE(store_->WorkerHeartbeat(b).value().alive);
    const MaintenancePass p = Pass(follower, b);
    if (p.now_leader.value_or(false)) took_over = second;
    if (p.swept && p.swept->rescued > 0) judged_after = second;
  }
  EXPECT_EQ(took_over, 3);
  EXPECT_EQ(judged_after, 10) << "its lease after the last heartbeat, not after the takeover";
  EXPECT_EQ(store_->JobGet(job)->state, JobState::kAvailable) << "lost, retried at once";
}

TEST_P(MaintainerTest, ANewLeaderJudgesALeaseRenewedByAClaimFromWhenItFirstSawIt) {
  const WorkerId frozen = RegisterWorker("frozen");
  const WorkerId a = RegisterWorker("leader");
  const WorkerId b = RegisterWorker("follower");
  Maintainer leader(*store_, env_, options_m_), follower(*store_, env_, options_m_);
  ASSERT_TRUE(Pass(leader, a).now_leader.value_or(false));
  Pass(follower, b);
  // Claimed after the worker's last heartbeat: its lease was written by the
  // claim, which no heartbeat covers. Then the worker and the leader freeze.
  clock_.Advance(seconds(1));
  const JobId job = Add(Spec());
  ASSERT_EQ(Claim(frozen, 1).size(), 1u);
  int judged_after = -1;
  for (int second = 0; second <= 15 && judged_after < 0; ++second) {
    ASSERT_TRUE(store_->WorkerHeartbeat(b).value().alive);
    const MaintenancePass p = Pass(follower, b);
    if (p.swept && p.swept->rescued > 0) judged_after = second;
    clock_.Advance(seconds(1));
  }
  EXPECT_EQ(judged_after, 10) << "its lease after the follower first saw it, not after taking over";
  EXPECT_EQ(store_->JobGet(job)->state, JobState::kAvailable);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, MaintainerTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace warden::testing
