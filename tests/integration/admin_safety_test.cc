// Issue 19 (9): operator commands must not kill healthy work. `warden sweep`
// holds to a keepalive threshold a live worker's late heartbeats cannot
// trip; `workers release` refuses a worker whose process runs on this host
// unless --force.
#include <csignal>

#include "env/process.h"
#include "harness.h"

namespace wt {
namespace {

class AdminSafetyTest : public IntegrationTest {
 protected:
  // A worker running one long job; returns the job's id.
  int64_t BusyWorker(Worker*& w) {
    w = &StartWorker("busy");
    const int64_t id = Add(Job("log start; sleep 60"));
    EXPECT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); }));
    return id;
  }
  // The job still runs its first attempt, and its worker is still active.
  void ExpectUntouched(int64_t job, const Worker& w) {
    const Json shown = Show(job);
    EXPECT_EQ(shown["state"], "running") << shown.dump();
    EXPECT_EQ(shown["attempt"], 1) << shown.dump();
    EXPECT_EQ(shown["attempts"].size(), 1u) << shown.dump();
    const Json row = WorkerRow(WorkerIdOf(w.pid()));
    EXPECT_EQ(row.value("state", ""), "active") << Workers().dump();
  }
};

TEST_P(AdminSafetyTest, SweepRefusesAKeepaliveThresholdBelowTheDefault) {
  Worker* w = nullptr;
  const int64_t job = BusyWorker(w);
  for (const char* threshold : {"1ms", "1s", "9999ms"}) {
    CliResult r = Cli({"sweep", "--keepalive-threshold", threshold}, /*json=*/false);
    EXPECT_EQ(r.exit_code, 2) << threshold << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("must be at least 10s"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << threshold;
  }
  // The worker (heartbeat 100ms) is not silent for 10s: a sweep at the
  // default or above changes nothing.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"sweep"}, {"sweep", "--keepalive-threshold", "10s"}}) {
    CliResult r = Cli(args, /*json=*/false);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("0 presumed dead"), std::string::npos) << r.out;
  }
  ExpectUntouched(job, *w);
  EXPECT_FALSE(w->LogHas("declared dead")) << w->Log();
}

// Silence is judged by watching a row stay unrenewed (a wall clock can step,
// so no single look can tell): one pass recovers nothing from a frozen
// worker, a watch as long as its lease (1 s) does.
TEST_P(AdminSafetyTest, SweepFindsSilenceOnlyByWatching) {
  Worker* w = nullptr;
  const int64_t job = BusyWorker(w);
  // A bare SIGSTOP can land inside a heartbeat's write transaction, and a
  // stopped SQLite writer locks every other writer out (a documented limit).
  ASSERT_TRUE(FreezeBetweenTransactions(*w));
  CliResult once = Cli({"sweep"}, /*json=*/false);
  EXPECT_EQ(once.exit_code, 0) << once.err;
  EXPECT_NE(once.out.find("0 recovered"), std::string::npos) << once.out;
  EXPECT_EQ(Show(job)["state"], "running");
  CliResult watched = Cli({"sweep", "--watch", "2s"}, /*json=*/true);
  ASSERT_TRUE(w->proc->Signal(SIGCONT));
  EXPECT_EQ(watched.exit_code, 0) << watched.err;
  EXPECT_EQ(Json::parse(watched.out).value("rescued", -1), 1) << watched.out;
  const Json shown = Show(job);
  ASSERT_GE(shown["attempts"].size(), 1u) << shown.dump();
  EXPECT_EQ(shown["attempts"][0]["error"]["kind"], "lost") << shown.dump();
}

TEST_P(AdminSafetyTest, ReleaseRefusesAWorkerRunningOnThisHostUnlessForced) {
  Worker* w = nullptr;
  const int64_t job = BusyWorker(w);
  const int64_t wid = WorkerIdOf(w->pid());
  ASSERT_GT(wid, 0);
  const std::string pid = std::to_string(w->pid());
  for (const std::string& target : {std::string("busy"), std::to_string(wid)}) {
    CliResult r = Cli({"workers", "release", target}, /*json=*/false);
    EXPECT_EQ(r.exit_code, 1) << target << ": " << r.out << r.err;
    EXPECT_EQ(r.out, "") << target;
    EXPECT_NE(r.err.find("process " + pid + " on " + warden::HostName() + " is running"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  }
  ExpectUntouched(job, *w);

  // --force does what was asked: dead now, its job recovered.
  CliResult r = Cli({"workers", "release", "busy", "--force"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("declared dead; 1 job recovered"), std::string::npos) << r.out;
  const Json row = WorkerRow(wid);
  EXPECT_EQ(row.value("state", ""), "dead") << Workers().dump();
  EXPECT_EQ(Show(job)["attempts"][0]["error"]["kind"], "lost") << Show(job).dump();
}

TEST_P(AdminSafetyTest, ReleaseOfAWorkerWhoseProcessIsGoneNeedsNoForce) {
  Worker& w = StartWorker("gone", FastFlags({{"--sweep-interval", "1h"}}));
  const int64_t wid = WorkerIdOf(w.pid());
  ASSERT_GT(wid, 0);
  // SIGKILL: the row stays active (no other worker runs to sweep), the
  // process is gone.
  w.proc->Kill();
  ASSERT_TRUE(w.proc->WaitExit(Millis(10'000)));
  ASSERT_EQ(WorkerRow(wid).value("state", ""), "active") << Workers().dump();
  CliResult r = Cli({"workers", "release", "gone"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(WorkerRow(wid).value("state", ""), "dead") << Workers().dump();
}

INSTANTIATE_TEST_SUITE_P(Backends, AdminSafetyTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
