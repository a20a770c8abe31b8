#include "warden/invariants.h"

#include <gtest/gtest.h>

namespace warden {
namespace {

AttemptInfo Attempt(int n, int64_t token, std::string outcome, TimeMs claimed,
                    std::optional<TimeMs> finished, WorkerId worker = 1) {
  AttemptInfo a;
  a.attempt = n;
  a.lease_token = token;
  a.outcome = std::move(outcome);
  a.claimed_at = claimed;
  a.finished_at = finished;
  a.worker = worker;
  return a;
}

JobInfo Job(JobId id, JobState state, std::vector<AttemptInfo> attempts) {
  JobInfo j;
  j.id = id;
  j.state = state;
  j.attempt = static_cast<int>(attempts.size());
  j.attempts = std::move(attempts);
  return j;
}

// A clean run: job 1 lost once and succeeded on its second attempt, job 2
// (at-most-once, key "k") succeeded, job 3 (key "k") dead after job 2.
InvariantInput Clean() {
  InvariantInput in;
  in.jobs.push_back(Job(1, JobState::kSucceeded,
                        {Attempt(1, 11, "lost", 100, 200), Attempt(2, 12, "succeeded", 300, 400)}));
  in.jobs.push_back(Job(2, JobState::kSucceeded, {Attempt(1, 21, "succeeded", 100, 150)}));
  in.jobs.back().delivery = Delivery::kAtMostOnce;
  in.jobs.back().concurrency_key = "k";
  in.jobs.push_back(Job(3, JobState::kDead, {Attempt(1, 31, "error", 150, 170)}));
  in.jobs.back().concurrency_key = "k";
  in.acknowledged = {1, 2, 3};
  in.runs = {{1, 1, 11, 1, false}, {1, 2, 12, 1, true}, {2, 1, 21, 1, true}, {3, 1, 31, 1, false}};
  return in;
}

std::vector<int> Violations(const InvariantInput& in) {
  std::vector<int> out;
  for (const InvariantResult& r : CheckInvariants(in)) out.push_back(r.violations);
  return out;
}

TEST(InvariantsTest, ACleanRunHoldsThemAll) {
  const auto results = CheckInvariants(Clean());
  EXPECT_EQ(DescribeViolations(results), "");
  EXPECT_EQ(results.size(), 5u);
}

TEST(InvariantsTest, ALostOrUnfinishedJobBreaksTheFirst) {
  InvariantInput in = Clean();
  in.acknowledged.push_back(4);
  in.jobs[0].state = JobState::kRunning;
  in.jobs[0].attempts[1].outcome = "running";
  in.jobs[0].attempts[1].finished_at.reset();
  in.runs[1].finished = false;
  EXPECT_EQ(Violations(in), (std::vector<int>{2, 0, 0, 0, 0}));
  in.drained = false;  // still running is fine mid-run; lost is not
  EXPECT_EQ(Violations(in), (std::vector<int>{1, 0, 0, 0, 0}));
}

TEST(InvariantsTest, TwoCompletionsOrOneNoRunFinishedBreakTheSecond) {
  InvariantInput in = Clean();
  in.jobs[0].attempts[0].outcome = "succeeded";
  EXPECT_EQ(Violations(in)[1], 2) << DescribeViolations(CheckInvariants(in));
  in = Clean();
  in.runs[1].finished = false;  // the store says succeeded; no run got there
  EXPECT_EQ(Violations(in)[1], 1);
  in.ledger_sees_ends = false;
  EXPECT_EQ(Violations(in)[1], 0);
}

TEST(InvariantsTest, AnAtMostOnceJobStartedTwiceBreaksTheThirdUnlessRetried) {
  InvariantInput in = Clean();
  in.runs.push_back({2, 1, 21, 1, false});
  EXPECT_EQ(Violations(in)[2], 1);
  in.retried_by_operator.insert(2);
  EXPECT_EQ(Violations(in)[2], 0);
  in = Clean();
  in.runs.push_back({1, 2, 12, 1, false});  // at-least-once: may start again
  EXPECT_EQ(Violations(in)[2], 0);
  in = Clean();
  in.jobs[1].attempts.push_back(Attempt(2, 22, "lost", 200, 300));
  in.jobs[1].attempts[0].started_at = 101;
  in.jobs[1].attempts[1].started_at = 201;  // the store marked it twice
  EXPECT_EQ(Violations(in)[2], 1);
}

TEST(InvariantsTest, OverlappingAttemptsOfOneKeyBreakTheFourth) {
  InvariantInput in = Clean();
  in.jobs[2].attempts[0].claimed_at = 120;  // job 2 holds "k" until 150
  EXPECT_EQ(Violations(in)[3], 1);
  in.jobs[2].attempts[0].claimed_at = 150;  // as job 2 ends: fine
  EXPECT_EQ(Violations(in)[3], 0);
  in.jobs[1].attempts[0].finished_at.reset();  // job 2 still holds it
  EXPECT_EQ(Violations(in)[3], 1);
  in.store_clock_steady = false;
  EXPECT_EQ(Violations(in)[3], 0);
}

TEST(InvariantsTest, ARunTheStoreDoesNotKnowBreaksTheFifth) {
  InvariantInput in = Clean();
  in.runs.push_back({1, 3, 13, 1, false});  // no attempt 3
  in.runs.push_back({1, 1, 99, 1, false});  // attempt 1 had token 11
  in.runs.push_back({3, 1, 31, 2, false});  // attempt 1 was worker 1's
  EXPECT_EQ(Violations(in)[4], 3);
}

TEST(InvariantsTest, RunningJobsSharingAKeyAreAConflictAtAnyMoment) {
  std::vector<JobInfo> jobs = Clean().jobs;
  EXPECT_TRUE(RunningKeyConflicts(jobs).empty());
  jobs[1].state = JobState::kRunning;
  jobs[2].state = JobState::kRunning;
  EXPECT_EQ(RunningKeyConflicts(jobs), (std::vector<std::string>{
                                            "key 'k' is held by running jobs 2 3"}));
}

}  // namespace
}  // namespace warden
