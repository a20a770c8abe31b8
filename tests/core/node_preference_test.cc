// core/node_preference.h: which endings send a job elsewhere, which workers
// count as another node that can take it, and the claim's side of it.
#include "core/node_preference.h"

#include <gtest/gtest.h>

#include <vector>

namespace warden {
namespace {

ClaimerElsewhere On(const std::string& node, int running = 0, int concurrency = 1) {
  ClaimerElsewhere c;
  c.worker.node = node;
  c.worker.queues = {"default"};
  c.worker.tasks = {"t"};
  c.worker.running = running;
  c.worker.concurrency = concurrency;
  return c;
}

ClaimerElsewhere OnNodeOf(const std::string& node, int64_t capacity, int64_t node_running) {
  ClaimerElsewhere c = On(node);
  c.node_capacity = capacity;
  c.node_running = node_running;
  return c;
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
  const std::vector<ClaimerElsewhere> same = {On("n1")};
  EXPECT_FALSE(AnotherNodeCanTake(same, "n1", "default", "t", false));
  const std::vector<ClaimerElsewhere> full = {On("n2", 2, 2)};
  EXPECT_FALSE(AnotherNodeCanTake(full, "n1", "default", "t", false));
  std::vector<ClaimerElsewhere> draining = {On("n2")};
  draining[0].worker.state = WorkerState::kDraining;
  EXPECT_FALSE(AnotherNodeCanTake(draining, "n1", "default", "t", false));
  const std::vector<ClaimerElsewhere> idle = {On("n2")};
  EXPECT_FALSE(AnotherNodeCanTake(idle, "n1", "other", "t", false));
  EXPECT_FALSE(AnotherNodeCanTake(idle, "n1", "default", "u", false));
  EXPECT_FALSE(AnotherNodeCanTake(idle, "n1", "default", "", true)) << "no --allow-cmd";
  EXPECT_TRUE(AnotherNodeCanTake(idle, "n1", "default", "t", false));
  const std::vector<ClaimerElsewhere> one_free = {On("n2", 1, 2)};
  EXPECT_TRUE(AnotherNodeCanTake(one_free, "n1", "default", "t", false));
  const std::vector<ClaimerElsewhere> mixed = {On("n1"), On("n2", 1, 1), On("n3")};
  EXPECT_TRUE(AnotherNodeCanTake(mixed, "n1", "default", "t", false));
}

// A node's capacity caps all its workers together: an idle worker on a node
// whose other workers fill it takes nothing.
TEST(NodePreferenceTest, AFreeSlotCountsOnlyOnANodeBelowItsCapacity) {
  const std::vector<ClaimerElsewhere> full = {OnNodeOf("n2", 4, 4)};
  EXPECT_FALSE(AnotherNodeCanTake(full, "n1", "default", "t", false));
  const std::vector<ClaimerElsewhere> over = {OnNodeOf("n2", 2, 3)};  // lowered while running
  EXPECT_FALSE(AnotherNodeCanTake(over, "n1", "default", "t", false));
  const std::vector<ClaimerElsewhere> room = {OnNodeOf("n2", 4, 3)};
  EXPECT_TRUE(AnotherNodeCanTake(room, "n1", "default", "t", false));
  const std::vector<ClaimerElsewhere> one_of_two = {OnNodeOf("n2", 1, 1), OnNodeOf("n3", 1, 0)};
  EXPECT_TRUE(AnotherNodeCanTake(one_of_two, "n1", "default", "t", false));
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
