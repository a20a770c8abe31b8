// Graceful shutdown: SIGTERM drains, then releases what is still running
// (not charged); a second SIGTERM releases at once; the row ends `stopped`.
#include <signal.h>

#include <iostream>

#include "harness.h"

namespace wt {
namespace {

using warden::JobState;

class ShutdownTest : public IntegrationTest {
 protected:
  std::string WorkerState(pid_t pid) {
    for (const Json& w : Workers()) {
      if (w["pid"] == pid) return w["state"].get<std::string>();
    }
    return "";
  }
};

// Attempt 1 runs for 30 s unless stopped; later attempts finish at once.
// `trap_term`: the job handles SIGTERM itself and exits 143.
std::string LongFirstAttempt(bool trap_term) {
  return std::string("log start $$; if [ \"$WARDEN_ATTEMPT\" = 1 ]; then ") +
         (trap_term ? "trap 'log term; exit 143' TERM; " : "") + "sleep 30 & wait; fi; log done";
}

TEST_P(ShutdownTest, SigtermLetsAShortJobFinish) {
  Worker& w = StartWorker("w", FastFlags({{"--shutdown-timeout", "20s"}}));
  const int64_t id = Add(Job("log start; sleep 0.7; log done"));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); }));
  ASSERT_TRUE(w.proc->Signal(SIGTERM));
  ASSERT_TRUE(w.proc->WaitExit(kDeadline)) << w.Log();
  EXPECT_EQ(w.proc->ExitCode(), 0) << w.Log();
  EXPECT_TRUE(w.LogHas("draining")) << w.Log();
  EXPECT_TRUE(LedgerHas(id, 1, "done"));
  const Json job = Show(id);
  EXPECT_EQ(job["state"], "succeeded");
  EXPECT_EQ(job["attempt"], 1);
  EXPECT_EQ(WorkerState(w.pid()), "stopped");
}

TEST_P(ShutdownTest, SigtermReleasesALongJobAfterTheShutdownTimeoutUncharged) {
  Worker& w = StartWorker("w", FastFlags({{"--shutdown-timeout", "300ms"}}), 2);
  const int64_t plain = Add(Job(LongFirstAttempt(false)));
  const int64_t trapping = Add(Job(LongFirstAttempt(true)));
  ASSERT_GT(trapping, 0);
  ASSERT_TRUE(
      WaitFor([&] { return LedgerHas(plain, 1, "start") && LedgerHas(trapping, 1, "start"); }));
  const ProcId p1 = ProcOf(LedgerFor(plain, "start").at(0));
  const ProcId p2 = ProcOf(LedgerFor(trapping, "start").at(0));

  const SteadyTime term = std::chrono::steady_clock::now();
  ASSERT_TRUE(w.proc->Signal(SIGTERM));
  ASSERT_TRUE(w.proc->WaitExit(kDeadline)) << w.Log();
  std::cout << "[ measure  ] worker exited " << MillisSince(term)
            << " ms after SIGTERM (shutdown timeout 300 ms)\n";
  EXPECT_EQ(w.proc->ExitCode(), 0) << w.Log();
  EXPECT_TRUE(Gone(p1));
  EXPECT_TRUE(Gone(p2));
  EXPECT_TRUE(LedgerHas(trapping, 1, "term"));
  EXPECT_EQ(WorkerState(w.pid()), "stopped");
  for (int64_t id : {plain, trapping}) {
    const Json job = Show(id);
    EXPECT_EQ(job["state"], "available") << job.dump(2);
    EXPECT_EQ(job["charged_attempts"], 0) << job.dump(2);
    ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
    EXPECT_EQ(job["attempts"][0]["outcome"], "released") << job.dump(2);
  }

  // They run again later, on the next worker.
  StartWorker("w2");
  for (int64_t id : {plain, trapping}) {
    ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); }));
    const Json job = Show(id);
    EXPECT_EQ(job["attempt"], 2);
    EXPECT_EQ(job["charged_attempts"], 0);
  }
}

TEST_P(ShutdownTest, SecondSigtermReleasesAtOnce) {
  Worker& w = StartWorker("w", FastFlags({{"--shutdown-timeout", "30s"}}));
  const int64_t id = Add(Job(LongFirstAttempt(false)));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); }));
  ASSERT_TRUE(w.proc->Signal(SIGTERM));
  // Standard signals do not queue: send the second once the first is seen.
  ASSERT_TRUE(WaitFor([&] { return w.LogHas("draining"); })) << w.Log();
  EXPECT_FALSE(w.proc->Exited());
  const SteadyTime second = std::chrono::steady_clock::now();
  ASSERT_TRUE(w.proc->Signal(SIGTERM));
  ASSERT_TRUE(w.proc->WaitExit(kDeadline)) << w.Log();
  const int64_t ms = MillisSince(second);
  std::cout << "[ measure  ] worker exited " << ms << " ms after the second SIGTERM\n";
  EXPECT_LT(ms, 5000);
  EXPECT_EQ(w.proc->ExitCode(), 0);
  const Json job = Show(id);
  EXPECT_EQ(job["state"], "available");
  EXPECT_EQ(job["charged_attempts"], 0);
  EXPECT_EQ(job["attempts"][0]["outcome"], "released");
  EXPECT_EQ(WorkerState(w.pid()), "stopped");
}

TEST_P(ShutdownTest, SigintIsGracefulToo) {
  Worker& w = StartWorker("w", FastFlags({{"--shutdown-timeout", "300ms"}}));
  const int64_t id = Add(Job(LongFirstAttempt(false)));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); }));
  ASSERT_TRUE(w.proc->Signal(SIGINT));
  ASSERT_TRUE(w.proc->WaitExit(kDeadline)) << w.Log();
  EXPECT_EQ(w.proc->ExitCode(), 0);
  EXPECT_EQ(Show(id)["attempts"][0]["outcome"], "released");
  EXPECT_EQ(WorkerState(w.pid()), "stopped");
}

INSTANTIATE_TEST_SUITE_P(Backends, ShutdownTest, ::testing::ValuesIn(AllBackends()), BackendName);

}  // namespace
}  // namespace wt
