// A worker on a FaultEnv (env/fault_env.h): the operating system refusing
// what it can refuse (a fork, pidfds, wake-up fds, a look at /proc) gets a
// clear error or a slower path, never a lost or stuck job, and never a
// spinning worker.
#include <signal.h>

#include <iostream>
#include <thread>

#include "env/fault_env.h"
#include "harness.h"
#include "runtime/worker_seams.h"

namespace wt {
namespace {

using warden::JobState;

class EnvFaultTest : public IntegrationTest {
 protected:
  // An in-process worker on `env_`, running on a thread of this test.
  void StartInProcess(warden::WorkerOptions o) {
    o.allow_commands = true;
    o.name = "in-process";
    o.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      log_ += line + "\n";
    };
    warden::WorkerSeams seams;
    seams.env = &env_;
    auto w = warden::CreateWorker(db(), o, seams);
    ASSERT_TRUE(w.has_value()) << w.error().ToString();
    worker_ = std::move(*w);
    thread_ = std::thread([this] { run_status_ = worker_->Run(); });
    ASSERT_TRUE(WaitFor([&] { return worker_->id() != 0; }));
  }
  void StopInProcess() {
    if (!worker_) return;
    worker_->Stop();
    thread_.join();
    EXPECT_TRUE(run_status_.ok()) << run_status_.ToString();
    worker_.reset();
  }
  void TearDown() override {
    StopInProcess();
    IntegrationTest::TearDown();
  }
  static warden::WorkerOptions Fast() {
    warden::WorkerOptions o;
    o.heartbeat = Millis(100);
    o.lease = Millis(1000);
    o.keepalive_threshold = Millis(1000);
    o.sweep_interval = Millis(100);
    o.poll_interval = Millis(50);
    o.kill_grace = Millis(200);
    return o;
  }

  warden::FaultEnv env_{warden::DefaultEnv()};
  std::unique_ptr<warden::Worker> worker_;
  std::thread thread_;
  warden::Status run_status_;
  std::mutex log_mu_;
  std::string log_;
};

TEST_P(EnvFaultTest, AJobThatCannotBeSpawnedFailsWithTheReasonAndRunsWhenRetried) {
  env_.fail_spawns = true;
  StartInProcess(Fast());
  const int64_t id = Add(Job("log ran"), {"--max-attempts", "1"});
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kDead); }));
  const Json job = Show(id);
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["error"]["message"],
            "could not start: fork: Resource temporarily unavailable (injected by FaultEnv)");
  EXPECT_TRUE(LedgerFor(id, "ran").empty());

  env_.fail_spawns = false;
  ASSERT_EQ(Cli({"jobs", "retry", std::to_string(id)}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); }));
  EXPECT_EQ(LedgerFor(id, "ran").size(), 1u);
}

TEST_P(EnvFaultTest, WithoutWakeUpFdsAWorkerRunsItsJobsAndStops) {
  env_.fail_wake_fds = true;
  StartInProcess(Fast());
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Add(Job("log ran")));
  for (int64_t id : ids) {
    ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); })) << id;
  }
  // Its loops wake by their poll timeouts instead.
  const SteadyTime asked = std::chrono::steady_clock::now();
  StopInProcess();
  EXPECT_LT(MillisSince(asked), 5000);
}

// Without pidfds a death on this host is found by the periodic pass, well
// within the lease; and the sweeper does not spin on the pidfds it cannot
// open (it did: it took each failure for a death and swept again at once).
TEST_P(EnvFaultTest, WithoutPidfdsADeathIsProvenByTheNextPassWithoutSpinning) {
  const auto slow_lease = FastFlags({{"--heartbeat", "1s"},
                                     {"--lease", "30s"},
                                     {"--keepalive-threshold", "30s"},
                                     {"--sweep-interval", "200ms"}});
  Worker& victim = StartWorker("victim", slow_lease, 1);
  const int64_t id = Add(Job("log start; if [ \"$WARDEN_ATTEMPT\" = 1 ]; then sleep 60; fi"));
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); }));

  env_.fail_pidfds = true;
  warden::WorkerOptions o = Fast();
  o.heartbeat = Millis(1000);
  o.lease = Millis(30'000);
  o.keepalive_threshold = Millis(30'000);
  o.sweep_interval = Millis(200);
  const SteadyTime started = std::chrono::steady_clock::now();
  StartInProcess(o);
  // A second of passes that see the victim, each one trying (and failing)
  // to open its pidfd.
  ASSERT_TRUE(WaitFor([&] { return MillisSince(started) >= 1000 && env_.pidfd_opens >= 3; }));
  victim.proc->Kill();
  const SteadyTime killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 2, "start"); }, Millis(10'000)));
  const int64_t rescue_ms = MillisSince(killed);
  std::cout << "[ measure  ] without pidfds, attempt 2 started " << rescue_ms
            << " ms after SIGKILL (lease 30s, sweep 200ms)\n";
  EXPECT_LT(rescue_ms, 10'000);
  const int64_t ran_ms = MillisSince(started);
  // One attempt a pass (200 ms), and slack for a loaded machine; a spinning
  // sweeper tries every few ms.
  EXPECT_LE(env_.pidfd_opens.load(), ran_ms / 200 + 10) << "over " << ran_ms << " ms";
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); }));
}

// /proc tells nothing (hidepid): no death is proven from it, and a killed
// worker's job comes back by the other ways (its lease; on PostgreSQL, its
// lost session).
TEST_P(EnvFaultTest, WhenProcessesCannotBeSeenAKilledWorkersJobStillComesBack) {
  env_.hide_processes = true;
  Worker& victim = StartWorker("victim", FastFlags(), 1);
  const int64_t id = Add(Job("log start; if [ \"$WARDEN_ATTEMPT\" = 1 ]; then sleep 60; fi"));
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); }));
  StartInProcess(Fast());
  victim.proc->Kill();
  const SteadyTime killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); }, Millis(15'000)));
  std::cout << "[ measure  ] with /proc hidden, the job succeeded " << MillisSince(killed)
            << " ms after SIGKILL (lease 1s, sweep 100ms)\n";
  const Json job = Show(id);
  ASSERT_GE(job["attempts"].size(), 2u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["outcome"], "lost");
}

INSTANTIATE_TEST_SUITE_P(Backends, EnvFaultTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
