// WhyNotRunning: each reason from the facts that make it, and none
// invented: a job nothing holds back is `claimable`, and only that.
#include <gtest/gtest.h>

#include <algorithm>

#include "warden/why.h"

namespace warden {
namespace {

constexpr TimeMs kNow = 1'800'000'000'000;

WorkerInfo Worker(const std::string& name, std::vector<std::string> queues,
                  std::vector<std::string> tasks, int concurrency, int running,
                  WorkerState state = WorkerState::kActive) {
  WorkerInfo w;
  w.id = static_cast<WorkerId>(name.size());
  w.name = name;
  w.queues = std::move(queues);
  w.tasks = std::move(tasks);
  w.concurrency = concurrency;
  w.running = running;
  w.state = state;
  return w;
}

WhyFacts Waiting() {
  WhyFacts f;
  f.now = kNow;
  f.job.id = 7;
  f.job.queue = "mail";
  f.job.task = "send";
  f.job.state = JobState::kAvailable;
  f.job.run_at = kNow - 1000;
  f.live_workers = {Worker("w1", {"mail"}, {"send"}, 4, 1)};
  return f;
}

std::vector<std::string> Codes(const WhyFacts& f) {
  std::vector<std::string> codes;
  for (const WhyReason& r : WhyNotRunning(f)) codes.push_back(r.code);
  return codes;
}

TEST(WhyNotRunning, NothingHoldsItBackSaysClaimableAndNothingElse) {
  EXPECT_EQ(Codes(Waiting()), std::vector<std::string>{"claimable"});
}

TEST(WhyNotRunning, AFullQueueNamesTheJobsAtItsLimitAndWhenItsWindowOpens) {
  WhyFacts f = Waiting();
  QueueFlow flow;
  flow.limits.concurrency = 2;
  flow.limits.rate = RateLimit{10, Millis(60'000)};
  flow.running = 2;
  flow.holders = {{3, 2}, {4, 99}};  // worker 2 is w1's id (its name's length)
  flow.recent_starts = 4;
  f.queue_flow = flow;
  auto reasons = WhyNotRunning(f);
  ASSERT_EQ(reasons.size(), 1u) << "the window has room: only the concurrency limit";
  EXPECT_EQ(reasons[0].code, "queue_concurrency_limit");
  EXPECT_NE(reasons[0].message.find("2 of 2 running (jobs 3 (w1), 4 (worker 99))"),
            std::string::npos)
      << reasons[0].message;
  EXPECT_EQ(reasons[0].evidence["holders"][1]["worker"], 99);

  flow.running = 1;
  flow.recent_starts = 10;
  flow.next_start_at = kNow + 1500;
  f.queue_flow = flow;
  reasons = WhyNotRunning(f);
  ASSERT_EQ(reasons.size(), 1u) << "a place is free: only the rate";
  EXPECT_EQ(reasons[0].code, "queue_rate_limit");
  EXPECT_NE(reasons[0].message.find("10/1m: 10 started in the last 1m; the next may start at"),
            std::string::npos)
      << reasons[0].message;
  EXPECT_NE(reasons[0].message.find("(in 1.5s)"), std::string::npos) << reasons[0].message;
  EXPECT_EQ(reasons[0].evidence["recent_starts"], 10);

  flow.recent_starts = 3;
  flow.next_start_at.reset();
  f.queue_flow = flow;
  EXPECT_EQ(Codes(f), std::vector<std::string>{"claimable"}) << "room in both";
}

TEST(WhyNotRunning, RunningAndFinishedJobsSaySoAlone) {
  WhyFacts f = Waiting();
  f.job.state = JobState::kRunning;
  f.job.worker = 3;
  f.job.worker_name = "w1";
  f.queue_paused_at = kNow;  // beside the point for a running job
  const auto running = WhyNotRunning(f);
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].code, "running");
  EXPECT_NE(running[0].message.find("on worker w1"), std::string::npos);
  f.job.state = JobState::kDead;
  f.job.last_error = ErrorKind::kCrash;
  const auto dead = WhyNotRunning(f);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].code, "finished");
  EXPECT_NE(dead[0].message.find("dead (last error: crash)"), std::string::npos) << dead[0].message;
  EXPECT_NE(dead[0].message.find("warden jobs retry"), std::string::npos);
}

TEST(WhyNotRunning, ScheduledAndBackingOffSayUntilWhen) {
  WhyFacts f = Waiting();
  f.job.state = JobState::kScheduled;
  f.job.run_at = kNow + 90'000;
  EXPECT_EQ(Codes(f), std::vector<std::string>{"scheduled"});
  EXPECT_NE(WhyNotRunning(f)[0].message.find("(in 1.5m)"), std::string::npos)
      << WhyNotRunning(f)[0].message;
  f.job.state = JobState::kRetryable;
  f.job.attempt = 2;
  f.job.last_error = ErrorKind::kTimeout;
  const auto r = WhyNotRunning(f);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].code, "backing_off");
  EXPECT_NE(r[0].message.find("after attempt 2 failed (timeout)"), std::string::npos)
      << r[0].message;
  // Due already: the next claim promotes it.
  f.job.run_at = kNow - 1;
  EXPECT_EQ(Codes(f), std::vector<std::string>{"claimable"});
}

TEST(WhyNotRunning, EveryReasonThatHoldsIsListed) {
  WhyFacts f = Waiting();
  f.queue_paused_at = kNow - 5000;
  f.job.concurrency_key = "acct-1";
  f.key_holder = 41;
  f.job.start_deadline_at = kNow - 10;
  f.live_workers = {Worker("busy", {"mail"}, {"send"}, 2, 2)};
  EXPECT_EQ(Codes(f), (std::vector<std::string>{"start_deadline_passed", "queue_paused",
                                                "concurrency_key_held", "slots_busy"}));
  const auto r = WhyNotRunning(f);
  EXPECT_EQ(r[2].evidence["held_by"], 41);
  EXPECT_NE(r[1].message.find("warden queues resume mail"), std::string::npos);
}

TEST(WhyNotRunning, AJobKeptFromTheNodeThatLostItSaysSoBesideWhatElseHolds) {
  WhyFacts f = Waiting();
  f.job.avoid_node = "n1";
  f.job.avoid_node_until = kNow + 1500;
  auto reasons = WhyNotRunning(f);
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_EQ(reasons[0].code, "avoids_node");
  EXPECT_EQ(reasons[0].evidence.value("node", ""), "n1");
  EXPECT_NE(reasons[0].message.find("node n1"), std::string::npos) << reasons[0].message;
  EXPECT_EQ(reasons[1].code, "claimable") << "w1 has free slots: it only keeps n1 back";

  f.live_workers[0].running = 4;
  EXPECT_EQ(Codes(f), (std::vector<std::string>{"avoids_node", "slots_busy"}));
  f.job.avoid_node_until = kNow;  // over
  EXPECT_EQ(Codes(f), std::vector<std::string>{"slots_busy"});
}

TEST(WhyNotRunning, WorkersThatCannotRunItDoNotCount) {
  WhyFacts f = Waiting();
  f.live_workers = {Worker("other-queue", {"reports"}, {"send"}, 8, 0),
                    Worker("other-task", {"mail"}, {"resize"}, 8, 0)};
  EXPECT_EQ(Codes(f), std::vector<std::string>{"no_worker_serves"});
  f.live_workers.push_back(Worker("leaving", {"mail"}, {"send"}, 8, 0, WorkerState::kDraining));
  EXPECT_EQ(Codes(f), std::vector<std::string>{"only_draining_workers"});
  // A command job needs a worker that runs command jobs.
  f = Waiting();
  f.job.command = "echo hi";
  EXPECT_EQ(Codes(f), std::vector<std::string>{"no_worker_serves"});
  f.live_workers[0].allow_commands = true;
  EXPECT_EQ(Codes(f), std::vector<std::string>{"claimable"});
  // A worker with no queue list serves every queue.
  f = Waiting();
  f.live_workers = {Worker("all", {}, {"send"}, 1, 0)};
  EXPECT_EQ(Codes(f), std::vector<std::string>{"claimable"});
}

}  // namespace
}  // namespace warden
