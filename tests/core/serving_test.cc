// The claim's rule in one place (CanRun), the jobs no worker serves, and
// how they are named for people.
#include <gtest/gtest.h>

#include "warden/duration.h"
#include "warden/backlog.h"

namespace warden {
namespace {

BacklogGroup Group(std::string queue, std::string task, bool command, JobState state,
                   int64_t count, TimeMs next_run_at = 0) {
  return BacklogGroup{std::move(queue), std::move(task), command, state, count, next_run_at};
}

TEST(CanRun, QueueThenTaskOrCommandsAsTheClaimSelects) {
  const Serving w{{"default", "q2"}, {"resize"}, false};
  EXPECT_TRUE(CanRun(w, "default", "resize", false));
  EXPECT_TRUE(CanRun(w, "q2", "resize", false));
  EXPECT_FALSE(CanRun(w, "q3", "resize", false));    // not its queue
  EXPECT_FALSE(CanRun(w, "default", "thumb", false));  // not its task
  EXPECT_FALSE(CanRun(w, "default", "resize", true));  // a command job, no --allow-cmd
  const Serving commands{{}, {}, true};               // every queue
  EXPECT_TRUE(CanRun(commands, "anything", "command", true));
  EXPECT_FALSE(CanRun(commands, "anything", "resize", false));
}

TEST(Unserved, WaitingGroupsNoWorkerRunsRunningOnesNever) {
  const std::vector<BacklogGroup> backlog = {
      Group("default", "resize", false, JobState::kAvailable, 3),
      Group("default", "thumb", false, JobState::kRetryable, 1),
      Group("default", "thumb", false, JobState::kRunning, 2),
      Group("q2", "command", true, JobState::kScheduled, 4),
  };
  const std::vector<Serving> workers = {{{"default"}, {"resize"}, false}};
  const auto out = Unserved(backlog, workers);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].task, "thumb");
  EXPECT_EQ(out[0].state, JobState::kRetryable);
  EXPECT_EQ(out[1].queue, "q2");
  EXPECT_EQ(Unserved(backlog, {}).size(), 3u);
}

TEST(DescribeGroups, BiggestFirstStatesMergedLaterOnesSayWhen) {
  const TimeMs now = 1'000'000;
  const std::vector<BacklogGroup> groups = {
      Group("q2", "other", false, JobState::kAvailable, 1),
      Group("default", "resize", false, JobState::kAvailable, 2),
      Group("default", "resize", false, JobState::kRetryable, 1),
      Group("default", "later", false, JobState::kScheduled, 1, now + 5'400'000),
      Group("default", "x", true, JobState::kAvailable, 1),
  };
  EXPECT_EQ(DescribeGroups(groups, now),
            "3 jobs on queue default of task resize; 1 job on queue default (command jobs); "
            "1 job on queue default of task later, the next due in 1h30m; 1 job on queue q2 "
            "of task other");
  std::vector<BacklogGroup> many;
  for (int i = 0; i < 7; ++i) many.push_back(Group("q", std::to_string(i), false,
                                                   JobState::kAvailable, 10 - i));
  EXPECT_TRUE(DescribeGroups(many, now).ends_with("; 9 jobs more")) << DescribeGroups(many, now);
}

TEST(HumanDuration, TwoLargestUnitsForPeople) {
  EXPECT_EQ(HumanDuration(Millis(850)), "850ms");
  EXPECT_EQ(HumanDuration(Millis(4250)), "4.2s");
  EXPECT_EQ(HumanDuration(Millis(42'000)), "42s");
  EXPECT_EQ(HumanDuration(Millis(185'000)), "3m5s");
  EXPECT_EQ(HumanDuration(Millis(3'598'829)), "59m58s");
  EXPECT_EQ(HumanDuration(Millis(5'400'000)), "1h30m");
  EXPECT_EQ(HumanDuration(Millis(3'600'000)), "1h");
  EXPECT_EQ(HumanDuration(Millis(187'200'000)), "2d4h");
  EXPECT_EQ(HumanDuration(Millis(-5)), "0ms");
}

}  // namespace
}  // namespace warden
