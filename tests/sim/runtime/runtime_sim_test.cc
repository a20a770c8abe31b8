// warden's real worker runtime (src/runtime, src/maintenance) under the
// Scheduler: real Worker objects, their real threads taking turns in
// virtual time, on a real store (the in-memory one, and SQLite) whose clock
// is virtual too. A run is a
// function of its seed; jobs far longer than a lease keep it by the real
// heartbeat loop; a frozen worker's jobs are recovered by the real sweeper
// of another, and its late outcomes are fenced.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>

#include "core/held_bound.h"
#include "runtime_sim.h"

namespace warden::sim {
namespace {

class RuntimeSimTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/warden-runtime-sim-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // A fresh database of the test's backend.
  std::string NewDb() {
    const std::string n = std::to_string(++runs_);
    if (GetParam() == "memory") return "memory:" + dir_ + "/" + n;
    return dir_ + "/" + n + ".db";
  }
  static WorkerOptions Options() {
    WorkerOptions o;
    o.concurrency = 4;
    o.heartbeat = Millis(1000);
    o.lease = Millis(5000);
    o.keepalive_threshold = Millis(5000);
    o.sweep_interval = Millis(1000);
    o.poll_interval = Millis(1000);
    return o;
  }
  std::string dir_;
  int runs_ = 0;
};

struct Outcome {
  std::string trace;
  VirtUs finished_at = 0;
};

Outcome RunTwelveLongJobs(uint64_t seed, const std::string& db, const WorkerOptions& o) {
  RuntimeSim sim(seed, db);
  sim.sched().set_trace(true);
  sim.Enqueue(12, 30'000);
  SimWorkerProcess& w = sim.StartWorker(101, o);
  Outcome out;
  EXPECT_TRUE(sim.RunUntilAllSucceed(12, 600 * kSecond)) << w.log;
  out.finished_at = sim.sched().now();
  for (JobId id = 1; id <= 12; ++id) {
    const auto job = sim.admin().JobGet(id);
    EXPECT_TRUE(job.has_value());
    if (job.has_value()) {
      EXPECT_EQ(job->attempt, 1) << "job " << id << "\n" << w.log;
    }
  }
  sim.StopAll();
  out.trace = sim.sched().trace();
  return out;
}

TEST_P(RuntimeSimTest, JobsLongerThanTheirLeaseRunOnceInVirtualTime) {
  const Outcome a = RunTwelveLongJobs(7, NewDb(), Options());
  // 12 jobs of 30 s on 4 slots: three rounds, each kept by heartbeats past
  // its 5 s lease.
  EXPECT_GE(a.finished_at, 90 * kSecond);
  EXPECT_LT(a.finished_at, 100 * kSecond);
}

// "" if equal; else the first line where they differ, in each.
std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t at = 0, line = 1;
  while (at < a.size() && at < b.size() && a[at] == b[at]) {
    if (a[at++] == '\n') ++line;
  }
  if (at == a.size() && at == b.size()) return "";
  auto line_of = [](const std::string& s, size_t from) {
    const size_t start = s.rfind('\n', from == 0 ? 0 : from - 1);
    const size_t begin = start == std::string::npos || from == 0 ? 0 : start + 1;
    return s.substr(begin, s.find('\n', begin) - begin);
  };
  return "line " + std::to_string(line) + ": '" + line_of(a, at) + "' vs '" + line_of(b, at) + "'";
}

TEST_P(RuntimeSimTest, ARunIsAFunctionOfItsSeed) {
  const Outcome a = RunTwelveLongJobs(11, NewDb(), Options());
  const Outcome b = RunTwelveLongJobs(11, NewDb(), Options());
  const Outcome c = RunTwelveLongJobs(12, NewDb(), Options());
  EXPECT_GT(a.trace.size(), 1000u);
  EXPECT_EQ(FirstDifference(a.trace, b.trace), "");
  EXPECT_NE(a.trace, c.trace);
}

// A worker frozen (SIGSTOP, a paused VM) with four jobs: the real sweeper of
// another worker judges their leases silent and recovers them within lease
// + 2 sweeps; thawed, the frozen worker stops its runs and its late
// outcomes change nothing.
TEST_P(RuntimeSimTest, AFrozenWorkersJobsAreRecoveredByAnotherAndItsLateOutcomesFenced) {
  RuntimeSim sim(21, NewDb());
  sim.Enqueue(4, 30'000);
  SimWorkerProcess& frozen = sim.StartWorker(101, Options());
  sim.sched().RunUntil(2 * kSecond);
  ASSERT_EQ(sim.Count(JobState::kRunning), 4) << frozen.log;
  SimWorkerProcess& other = sim.StartWorker(102, Options());
  sim.sched().RunUntil(3 * kSecond);
  const VirtUs froze_at = sim.sched().now();
  sim.sched().Freeze(101);

  // Lease 5 s, two sweeps of 1 s, a second of slack: then 30 s of work.
  ASSERT_TRUE(sim.RunUntilAllSucceed(4, froze_at + 38 * kSecond)) << other.log;
  for (JobId id = 1; id <= 4; ++id) {
    const JobInfo job = sim.admin().JobGet(id).value();
    ASSERT_EQ(job.attempts.size(), 2u) << "job " << id;
    EXPECT_EQ(job.attempts[0].outcome, "lost");
    EXPECT_EQ(job.attempts[1].outcome, "succeeded");
    EXPECT_EQ(job.attempts[1].worker_name, "w102");
    const VirtUs reclaimed = (job.attempts[1].claimed_at - kEpoch) * 1000;
    EXPECT_LE(reclaimed, froze_at + 8 * kSecond) << "job " << id;
  }

  sim.sched().Thaw(101);
  sim.sched().RunUntil(sim.sched().now() + 10 * kSecond);
  for (JobId id = 1; id <= 4; ++id) {
    const JobInfo job = sim.admin().JobGet(id).value();
    EXPECT_EQ(job.state, JobState::kSucceeded);
    EXPECT_EQ(job.attempts.size(), 2u) << "job " << id;
  }
  EXPECT_NE(frozen.log.find("registered again"), std::string::npos) << frozen.log;
  sim.StopAll();
  if (std::getenv("WARDEN_SIM_SHOW_LOGS")) std::cout << frozen.log << "----\n" << other.log;
}

// SIGKILL on the host of another worker: the next pass of that worker's
// real sweeper proves the death (its process gone from the host) and
// recovers the jobs at once, long before their leases would.
TEST_P(RuntimeSimTest, AKilledWorkersJobsComeBackAtTheNextPassOfAnotherOnItsHost) {
  RuntimeSim sim(31, NewDb());
  sim.Enqueue(4, 30'000);
  WorkerOptions slow_lease = Options();
  slow_lease.lease = Millis(60'000);
  slow_lease.keepalive_threshold = Millis(60'000);
  SimWorkerProcess& victim = sim.StartWorker(101, slow_lease);
  sim.sched().RunUntil(2 * kSecond);
  ASSERT_EQ(sim.Count(JobState::kRunning), 4) << victim.log;
  SimWorkerProcess& other = sim.StartWorker(102, slow_lease);
  sim.sched().RunUntil(3 * kSecond);
  const VirtUs killed_at = sim.sched().now();
  sim.Kill(victim);
  ASSERT_TRUE(sim.RunUntilAllSucceed(4, killed_at + 40 * kSecond)) << other.log;
  EXPECT_TRUE(victim.run->exited());
  for (JobId id = 1; id <= 4; ++id) {
    const JobInfo job = sim.admin().JobGet(id).value();
    ASSERT_EQ(job.attempts.size(), 2u) << "job " << id;
    EXPECT_EQ(job.attempts[0].outcome, "lost");
    EXPECT_EQ(job.attempts[1].worker_name, "w102");
    const VirtUs reclaimed = (job.attempts[1].claimed_at - kEpoch) * 1000;
    // One sweep interval (1 s), and the wake-up's way to the claim.
    EXPECT_LE(reclaimed, killed_at + 1500 * 1000) << "job " << id << "\n" << other.log;
    EXPECT_EQ(sim.ran_to_end().at(id), 1) << "job " << id;
  }
  sim.StopAll();
}

// The store gives a worker a job, and the reply never reaches it: the real
// heartbeat's list of held jobs shows it, the worker hands it back unrun,
// and it runs once.
TEST_P(RuntimeSimTest, AJobWhoseClaimReplyIsLostIsHandedBackUnrunAndRunsOnce) {
  RuntimeSim sim(41, NewDb());
  sim.Enqueue(1, 2'000);
  SimWorkerProcess& w = sim.StartWorker(101, Options());
  bool lost_one = false;
  w.link->lose_reply = [&](const std::string& method) {
    if (method != "JobClaim" || lost_one || sim.Count(JobState::kRunning) == 0) return false;
    return lost_one = true;
  };
  ASSERT_TRUE(sim.RunUntilAllSucceed(1, 60 * kSecond)) << w.log;
  EXPECT_TRUE(lost_one);
  const JobInfo job = sim.admin().JobGet(1).value();
  ASSERT_EQ(job.attempts.size(), 2u) << w.log;
  EXPECT_EQ(job.attempts[0].outcome, "lost");
  EXPECT_EQ(job.attempts[1].outcome, "succeeded");
  EXPECT_EQ(sim.ran_to_end().at(1), 1);
  EXPECT_NE(w.log.find("its claim's reply never came"), std::string::npos) << w.log;
  sim.StopAll();
}

// The store commits outcomes slowly (every JobFinishMany takes 300 ms: a
// slow fsync, a loaded PostgreSQL) and the jobs take no time, so the
// completer falls far behind the slots. A job is its worker's, `running` in
// the store, until its outcome commits, and a crash would run each such job
// again: after every store call, the worker holds at most
// HeldBound(slots) of them (core/held_bound.h), where a worker that counted
// only its running handlers claimed on and held nearly all 2,000. And the
// jobs still run in a few batches' time, not one claim's worth per commit:
// running and group commit overlap.
TEST_P(RuntimeSimTest, SlowCompletionsKeepTheJobsAWorkerHoldsWithinItsBound) {
  RuntimeSim sim(51, NewDb());
  constexpr int kJobs = 2000;
  sim.Enqueue(kJobs, 0);
  const WorkerOptions o = Options();
  const int64_t bound = HeldBound(o.concurrency);
  SimWorkerProcess& w = sim.StartWorker(101, o);
  w.link->work_time = [](const std::string& method) -> VirtUs {
    return method == "JobFinishMany" ? 300'000 : 0;
  };
  int64_t most = 0, checks = 0;
  VirtUs most_at = 0;
  auto checked = w.link->after_call;
  w.link->after_call = [&, checked](const std::string& method) {
    if (checked) checked(method);
    ++checks;
    if (const int64_t n = sim.Count(JobState::kRunning); n > most) {
      most = n;
      most_at = sim.sched().now();
    }
  };
  // 2,000 / 512 a batch: 4 commits of 300 ms, each after a window.
  ASSERT_TRUE(sim.RunUntilAllSucceed(kJobs, 10 * kSecond)) << w.log;
  EXPECT_GT(checks, 100);
  RecordProperty("most_held", std::to_string(most));
  RecordProperty("all_done_ms", std::to_string(sim.sched().now() / 1000));
  EXPECT_LE(most, bound) << "the worker held " << most << " jobs at " << most_at / 1000
                         << " ms, more than " << o.concurrency << " slots allow (" << bound
                         << ")";
  // The allowance is used: outcomes pile up behind a commit while the
  // slots run on.
  EXPECT_GT(most, o.concurrency + kClaimAheadMax);
  for (JobId id : {JobId{1}, JobId{kJobs / 2}, JobId{kJobs}}) {
    EXPECT_EQ(sim.admin().JobGet(id).value().attempts.size(), 1u) << "job " << id;
  }
  sim.StopAll();
}

// What the bound is for: SIGKILLed while its commits lag, a worker's jobs
// not yet recorded are recovered and run again by another worker. At most
// HeldBound(slots) of them, not the completer's backlog.
TEST_P(RuntimeSimTest, ACrashWhileCommitsLagSendsBackAtMostTheBound) {
  RuntimeSim sim(52, NewDb());
  constexpr int kJobs = 2000;
  sim.Enqueue(kJobs, 0);
  const WorkerOptions o = Options();
  SimWorkerProcess& victim = sim.StartWorker(101, o);
  victim.link->work_time = [](const std::string& method) -> VirtUs {
    return method == "JobFinishMany" ? 300'000 : 0;
  };
  // Past the first commit (300 ms), before the second.
  sim.sched().RunUntil(450'000);
  const int64_t committed = sim.Count(JobState::kSucceeded);
  ASSERT_GT(committed, 0) << victim.log;
  ASSERT_LT(committed, kJobs) << victim.log;
  sim.Kill(victim);
  SimWorkerProcess& other = sim.StartWorker(102, o);
  ASSERT_TRUE(sim.RunUntilAllSucceed(kJobs, 30 * kSecond)) << other.log;
  int64_t recovered = 0, ran_twice = 0;
  for (const JobInfo& job : sim.Jobs(kJobs)) {
    recovered += job.attempts.size() > 1;
    ran_twice += sim.ran_to_end().at(job.id) > 1;
  }
  RecordProperty("committed_at_kill", std::to_string(committed));
  RecordProperty("recovered", std::to_string(recovered));
  RecordProperty("ran_twice", std::to_string(ran_twice));
  EXPECT_GT(recovered, 0);
  EXPECT_LE(recovered, HeldBound(o.concurrency))
      << ran_twice << " of them had run to their end before the kill";
  sim.StopAll();
}

INSTANTIATE_TEST_SUITE_P(Stores, RuntimeSimTest, ::testing::Values("memory", "sqlite"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace warden::sim
