// core/node_preference.h: which endings send a job elsewhere, which workers
// count as another node that can take it, and the claim's side of it.
#include "core/node_preference.h"

#include <gtest/gtest.h>

#include <vector>

namespace warden {
namespace {

WorkerInfo On(const std::string& node, int running = 0, int concurrency = 1) {
  WorkerInfo w;
  w.node = node;
  w.queues = {"default"};
  w.tasks = {"t"};
  w.running = running;
  w.concurrency = concurrency;
  return w;
}

TEST(NodePreferenceTest, ACrashOrALossThatPutsTheJobBackPrefersAnotherNode) {
  EXPECT_TRUE(LossPrefersAnotherNode(ErrorKind::kCrash, std::nullopt, JobState::kRetryable));
  for (LossCause c : {LossCause::kProvenDeath, LossCause::kLeaseExpiry, LossCause::kOperator,
                      LossCause::kWorkerStop}) {
    EXPECT_TRUE(LossPrefersAnotherNode(ErrorKind::kLost, c, JobState::kAvailable))
        << LossCauseName(c);
  }
  EXPECT_FALSE(LossPrefersAnotherNode(ErrorKind::kReleased, LossCause::kRelease,
                                      JobState::kAvailable));
  EXPECT_FALSE(LossPrefersAnotherNode(ErrorKind::kReleased, std::nullopt, JobState::kAvailable));
  EXPECT_FALSE(LossPrefersAnotherNode(ErrorKind::kError, std::nullopt, JobState::kRetryable));
  EXPECT_FALSE(LossPrefersAnotherNode(ErrorKind::kTimeout, std::nullopt, JobState::kRetryable));
  // Nothing to prefer for a job that does not run again.
  EXPECT_FALSE(LossPrefersAnotherNode(ErrorKind::kCrash, std::nullopt, JobState::kDead));
  EXPECT_FALSE(
      LossPrefersAnotherNode(ErrorKind::kLost, LossCause::kProvenDeath, JobState::kCancelled));
}

TEST(NodePreferenceTest, AnotherNodeMustServeTheJobAndHaveAFreeSlot) {
  const std::vector<WorkerInfo> same = {On("n1")};
  EXPECT_FALSE(AnotherNodeCanTake(same, "n1", "default", "t", false));
  const std::vector<WorkerInfo> full = {On("n2", 2, 2)};
  EXPECT_FALSE(AnotherNodeCanTake(full, "n1", "default", "t", false));
  std::vector<WorkerInfo> draining = {On("n2")};
  draining[0].state = WorkerState::kDraining;
  EXPECT_FALSE(AnotherNodeCanTake(draining, "n1", "default", "t", false));
  const std::vector<WorkerInfo> idle = {On("n2")};
  EXPECT_FALSE(AnotherNodeCanTake(idle, "n1", "other", "t", false));
  EXPECT_FALSE(AnotherNodeCanTake(idle, "n1", "default", "u", false));
  EXPECT_FALSE(AnotherNodeCanTake(idle, "n1", "default", "", true)) << "no --allow-cmd";
  EXPECT_TRUE(AnotherNodeCanTake(idle, "n1", "default", "t", false));
  const std::vector<WorkerInfo> one_free = {On("n2", 1, 2)};
  EXPECT_TRUE(AnotherNodeCanTake(one_free, "n1", "default", "t", false));
  const std::vector<WorkerInfo> mixed = {On("n1"), On("n2", 1, 1), On("n3")};
  EXPECT_TRUE(AnotherNodeCanTake(mixed, "n1", "default", "t", false));
}

TEST(NodePreferenceTest, OnlyTheAvoidedNodeWaitsAndOnlyUntilThen) {
  EXPECT_TRUE(NodeMayClaim("n1", "", std::nullopt, 100));
  EXPECT_FALSE(NodeMayClaim("n1", "n1", 200, 100));
  EXPECT_FALSE(NodeMayClaim("n1", "n1", 200, 199));
  EXPECT_TRUE(NodeMayClaim("n1", "n1", 200, 200));
  EXPECT_TRUE(NodeMayClaim("n2", "n1", 200, 100));
}

}  // namespace
}  // namespace warden
