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

#include "runtime/worker_seams.h"
#include "scheduler.h"
#include "sim_env.h"
#include "sim_store.h"
#include "store/store.h"

namespace warden::sim {
namespace {

constexpr TimeMs kEpoch = 1'800'000'000'000;
constexpr VirtUs kSecond = 1'000'000;

// One simulated worker process and the thread that runs Worker::Run.
struct SimWorkerProcess {
  std::unique_ptr<SimLink> link;
  std::unique_ptr<SimEnv> env;
  std::unique_ptr<Worker> worker;
  SimThread* run = nullptr;
  Status status;
  std::string log;
};

class RuntimeSim {
 public:
  // `url`: "memory:..." or a SQLite file.
  RuntimeSim(uint64_t seed, const std::string& url) : sched_(seed), db_clock_(sched_, kEpoch) {
    path_ = url;
    options_.clock = &db_clock_;
    options_.durable = false;
    options_.jitter_seed = seed;
    auto admin = OpenStore(path_, options_);
    EXPECT_TRUE(admin.has_value()) << admin.error().ToString();
    admin_ = std::move(*admin);
    sched_.set_trace(true);
  }

  ~RuntimeSim() {
    for (auto& p : workers_) {
      if (p->run != nullptr && !p->run->exited()) p->worker->Stop(true);
    }
    sched_.RunUntil(sched_.now() + 600 * kSecond);
  }

  // Jobs of task "work" that run `ms` of their worker's clock each.
  void Enqueue(int n, int64_t ms) {
    std::vector<JobSpec> specs(static_cast<size_t>(n));
    for (JobSpec& s : specs) {
      s.task = "work";
      s.payload = Json{{"ms", ms}};
    }
    ASSERT_TRUE(admin_->JobInsertMany(specs).has_value());
  }

  SimWorkerProcess& StartWorker(int pid, WorkerOptions o) {
    auto p = std::make_unique<SimWorkerProcess>();
    SimWorkerProcess* raw = p.get();
    p->link = std::make_unique<SimLink>(sched_, static_cast<uint64_t>(pid));
    p->env = std::make_unique<SimEnv>(sched_, host_, pid, pid, 1, kEpoch);
    o.name = "w" + std::to_string(pid);
    o.log = [raw, this](const std::string& line) {
      raw->log += std::to_string(sched_.now() / 1000) + "ms " + line + "\n";
    };
    WorkerSeams seams;
    seams.env = p->env.get();
    seams.open_store = [this, raw]() -> Result<std::unique_ptr<Store>> {
      WARDEN_ASSIGN_OR_RETURN(auto store, OpenStore(path_, options_));
      return std::unique_ptr<Store>(std::make_unique<SimStore>(std::move(store), *raw->link));
    };
    auto w = CreateWorker(path_, o, seams);
    EXPECT_TRUE(w.has_value()) << w.error().ToString();
    p->worker = std::move(*w);
    SimEnv& env = *p->env;
    p->worker->Handle("work", [&env, this](JobContext& ctx) {
      const int64_t until = env.clock().MonotonicMs() + ctx.payload()["ms"].get<int64_t>();
      while (env.clock().MonotonicMs() < until) {
        // A killed process's code runs no more (its threads only unwind).
        if (ctx.stop_requested() || env.killed()) return FailedPrecondition("stopped");
        env.clock().SleepFor(Millis(std::min<int64_t>(100, until - env.clock().MonotonicMs())));
      }
      ++ran_to_end_[ctx.id()];
      ctx.SetResult(Json{{"attempt", ctx.attempt()}});
      return Status::Ok();
    });
    p->run = sched_.Spawn("run" + std::to_string(pid), pid,
                          [raw] { raw->status = raw->worker->Run(); });
    workers_.push_back(std::move(p));
    return *raw;
  }

  int64_t Count(JobState state) {
    auto stats = admin_->GetStats();
    if (!stats.has_value()) return -1;
    for (const auto& [s, n] : stats->jobs) {
      if (s == JobStateName(state)) return n;
    }
    return 0;
  }

  // Runs until every job of `total` succeeded or `limit` of virtual time.
  bool RunUntilAllSucceed(int64_t total, VirtUs limit) {
    for (VirtUs t = sched_.now(); t < limit; t += kSecond / 10) {
      sched_.RunUntil(t);
      if (Count(JobState::kSucceeded) == total) return true;
    }
    return false;
  }

  // SIGKILL: gone from its host, cut from the store, its threads unwound.
  void Kill(SimWorkerProcess& p) {
    p.env->Kill();
    p.link->killed = true;
    p.worker->Stop(/*release_now=*/true);
  }

  void StopAll() {
    for (auto& p : workers_) p->worker->Stop();
    sched_.RunUntil(sched_.now() + 120 * kSecond);
    for (auto& p : workers_) {
      EXPECT_TRUE(p->run->exited()) << p->log;
      if (!p->env->killed()) {
        EXPECT_TRUE(p->status.ok()) << p->status.ToString();
      }
    }
  }

  Scheduler& sched() { return sched_; }
  Store& admin() { return *admin_; }
  const std::map<JobId, int>& ran_to_end() const { return ran_to_end_; }

 private:
  Scheduler sched_;
  SimHost host_;
  SimClock db_clock_;
  std::string path_;
  StoreOptions options_;
  std::unique_ptr<Store> admin_;
  std::vector<std::unique_ptr<SimWorkerProcess>> workers_;
  std::map<JobId, int> ran_to_end_;
};

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

INSTANTIATE_TEST_SUITE_P(Stores, RuntimeSimTest, ::testing::Values("memory", "sqlite"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace warden::sim
