// A worker killed with SIGKILL: its jobs run again elsewhere (or go dead,
// per delivery mode) within the bound, their processes die with it, and a
// restart under the same name recovers at once.
#include <signal.h>

#include <iostream>

#include "harness.h"

namespace wt {
namespace {

using warden::JobState;

class RecoveryTest : public IntegrationTest {};

// Attempt 1 hangs (with a background grandchild); later attempts finish.
std::string HangFirstAttempt() {
  return "log start $$; sleep 30 & log bg $!; "
         "if [ \"$WARDEN_ATTEMPT\" = 1 ]; then wait; fi; log done";
}

TEST_P(RecoveryTest, SigkilledWorkersJobRunsAgainOnSurvivor) {
  Worker& a = StartWorker("a");
  Worker& b = StartWorker("b");
  const int64_t id = Add(Job(HangFirstAttempt()));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "bg"); }));
  const ProcId sh = ProcOf(LedgerFor(id, "start").at(0));
  const ProcId bg = ProcOf(LedgerFor(id, "bg").at(0));
  ASSERT_FALSE(Gone(sh));
  ASSERT_FALSE(Gone(bg));

  Worker* victim = WorkerByPid(HolderPid(id));
  ASSERT_NE(victim, nullptr);
  Worker* survivor = victim == &a ? &b : &a;
  const int64_t victim_id = WorkerIdOf(victim->pid());
  const int64_t survivor_id = WorkerIdOf(survivor->pid());

  const SteadyTime killed = std::chrono::steady_clock::now();
  victim->proc->Kill();
  ASSERT_TRUE(WaitFor([&] { return Gone(sh) && Gone(bg); }, Millis(5000)))
      << "the job (or its background child) outlived its killed worker";
  const int64_t orphan_ms = MillisSince(killed);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 2, "start"); }));
  const int64_t rescue_ms = MillisSince(killed);
  std::cout << "[ measure  ] job processes gone " << orphan_ms << " ms after SIGKILL; "
            << "attempt 2 running on the survivor after " << rescue_ms << " ms\n";
  EXPECT_LT(rescue_ms, 5000);

  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); }));
  const Json job = Show(id);
  EXPECT_EQ(job["state"], "succeeded");
  EXPECT_EQ(job["attempt"], 2);
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["outcome"], "lost");
  EXPECT_EQ(job["attempts"][0]["worker"], victim_id);
  EXPECT_EQ(job["attempts"][0]["error"]["kind"], "lost");
  EXPECT_EQ(job["attempts"][1]["outcome"], "succeeded");
  EXPECT_EQ(job["attempts"][1]["worker"], survivor_id);
  EXPECT_EQ(LedgerFor(id, "start").size(), 2u);
  EXPECT_EQ(LedgerFor(id, "done").size(), 1u);

  const Json dead = WorkerRow(victim_id);
  EXPECT_EQ(dead["state"], "dead") << dead.dump();
  EXPECT_NE(dead.value("death_reason", Json()).dump().find("gone"), std::string::npos)
      << dead.dump();
  EXPECT_GE(Stats()["recovery"]["rescued_attempts"].get<int64_t>(), 1);

  // The timeline says how the loss was found, and when the job could run
  // again: at once, before attempt 2's claim by the survivor.
  const Json t = Timeline(id);
  ASSERT_EQ(t["attempts"].size(), 2u) << t.dump(2);
  const Json& lost = t["attempts"][0];
  EXPECT_EQ(lost["lost_by"], "proven_death") << t.dump(2);
  EXPECT_EQ(lost["runnable_at"], lost["finished_at"]);
  EXPECT_LE(lost["runnable_at"].get<std::string>(),
            t["attempts"][1]["claimed_at"].get<std::string>());
  std::vector<std::string> kinds;
  for (const Json& e : t["events"]) kinds.push_back(e["kind"]);
  EXPECT_EQ(kinds, (std::vector<std::string>{"enqueued", "claimed", "lost", "runnable",
                                             "claimed", "succeeded"}))
      << t.dump(2);
  EXPECT_EQ(t["events"][1]["evidence"]["pid"], victim->pid()) << "the killed incarnation";
  EXPECT_TRUE(t["fenced_writes"].empty()) << "a killed worker writes nothing late";
}

TEST_P(RecoveryTest, SigkilledMaintenanceLeaderIsReplacedAndItsJobRecovered) {
  Worker& leader = StartWorker("leader");
  ASSERT_TRUE(WaitFor([&] { return leader.LogHas("now the maintenance leader"); }));
  const int64_t id = Add(Job(HangFirstAttempt()));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "bg"); }));  // only the leader runs
  const ProcId sh = ProcOf(LedgerFor(id, "start").at(0));
  ASSERT_FALSE(Gone(sh));
  Worker& follower = StartWorker("follower");
  ASSERT_EQ(HolderPid(id), leader.pid());
  const int64_t follower_id = WorkerIdOf(follower.pid());
  ASSERT_FALSE(follower.LogHas("now the maintenance leader"));

  const SteadyTime killed = std::chrono::steady_clock::now();
  leader.proc->Kill();
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 2, "start"); }));
  const int64_t rescue_ms = MillisSince(killed);
  std::cout << "[ measure  ] leader's job running again after " << rescue_ms << " ms\n";
  EXPECT_LT(rescue_ms, 5000);
  EXPECT_TRUE(WaitFor([&] { return Gone(sh); }, Millis(5000)));
  ASSERT_TRUE(WaitFor([&] { return follower.LogHas("now the maintenance leader"); }))
      << follower.Log();

  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); }));
  const Json job = Show(id);
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["outcome"], "lost");
  EXPECT_EQ(job["attempts"][1]["outcome"], "succeeded");
  EXPECT_EQ(job["attempts"][1]["worker"], follower_id);
}

TEST_P(RecoveryTest, StartedAtMostOnceJobOfKilledWorkerEndsDeadAndNeverRunsTwice) {
  Worker& a = StartWorker("a");
  Worker& b = StartWorker("b");
  const int64_t id = Add(Job("log start $$; sleep 30"), {"--at-most-once"});
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); }));
  Worker* victim = WorkerByPid(HolderPid(id));
  ASSERT_NE(victim, nullptr);
  Worker* survivor = victim == &a ? &b : &a;
  victim->proc->Kill();

  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kDead); }));
  // Proof that the survivor kept claiming afterwards: a later job ran.
  const int64_t marker = Add(Job("log marker"));
  ASSERT_TRUE(WaitFor([&] { return JobInState(marker, JobState::kSucceeded); }));
  EXPECT_FALSE(survivor->proc->Exited());

  const Json job = Show(id);
  EXPECT_EQ(job["state"], "dead");
  EXPECT_EQ(job["last_error"], "lost");
  EXPECT_EQ(job["delivery"], "at_most_once");
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["outcome"], "lost");
  EXPECT_FALSE(job["attempts"][0]["start_marked_at"].is_null()) << "the start mark was recorded";
  EXPECT_EQ(LedgerFor(id, "start").size(), 1u);
}

TEST_P(RecoveryTest, RestartUnderSameNameRecoversAtOnceAndTwinIsRefused) {
  // A 30 s lease: only startup recovery can make this fast.
  const std::vector<std::string> flags = FastFlags({{"--lease", "30s"}});
  Worker& first = StartWorker("w", flags);
  const int64_t id = Add(Job(HangFirstAttempt()));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "bg"); }));
  const ProcId sh = ProcOf(LedgerFor(id, "start").at(0));
  ASSERT_FALSE(Gone(sh));
  const SteadyTime killed = std::chrono::steady_clock::now();
  first.proc->Kill();

  Worker& second = StartWorker("w", flags);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 2, "start"); }));
  const int64_t rescue_ms = MillisSince(killed);
  std::cout << "[ measure  ] restarted worker ran the job again " << rescue_ms
            << " ms after the SIGKILL (lease 30 s)\n";
  EXPECT_LT(rescue_ms, 5000);
  EXPECT_TRUE(WaitFor([&] { return Gone(sh); }, Millis(5000)));
  EXPECT_TRUE(second.LogHas("unexpected shutdown")) << second.Log();
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); }));
  const Json job = Show(id);
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["outcome"], "lost");
  EXPECT_NE(job["attempts"][0]["error"]["message"].get<std::string>().find("unexpected shutdown"),
            std::string::npos)
      << job.dump(2);

  // A second live process with the same name is refused.
  Worker& twin = StartWorker("w", flags, 2, /*wait_started=*/false);
  ASSERT_TRUE(twin.proc->WaitExit(kDeadline));
  EXPECT_EQ(twin.proc->ExitCode(), 1);
  const std::string err = twin.Log();
  EXPECT_NE(err.find("already running"), std::string::npos) << err;
  EXPECT_NE(err.find(std::to_string(second.pid())), std::string::npos) << err;
  EXPECT_FALSE(twin.LogHas("started as worker"));
  EXPECT_FALSE(second.proc->Exited());
}

TEST_P(RecoveryTest, CheckpointSurvivesSigkillOfWorkerAndJob) {
  Worker& first = StartWorker("cp");
  const int64_t id =
      Add(Job("log start $$ \"cp=$WARDEN_CHECKPOINT\"; "
              "if [ \"$WARDEN_ATTEMPT\" = 1 ]; then echo 'checkpoint {\"i\":3}' >&3; log saved; "
              "sleep 30; fi; log done"));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] {
    auto j = GetJob(id);
    return j && j->checkpoint == Json{{"i", 3}};
  }));
  const ProcId sh = ProcOf(LedgerFor(id, "start").at(0));
  ASSERT_FALSE(Gone(sh));
  first.proc->Kill();
  ASSERT_TRUE(WaitFor([&] { return Gone(sh); }, Millis(5000)));

  StartWorker("cp");
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); }));
  const auto starts = LedgerFor(id, "start");
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0].args.at(1), "cp=");
  EXPECT_EQ(starts[1].attempt, 2);
  EXPECT_EQ(starts[1].args.at(1), "cp={\"i\":3}");
  const Json job = Show(id);
  EXPECT_EQ(job["checkpoint"], (Json{{"i", 3}}));
  EXPECT_EQ(job["attempts"][0]["outcome"], "lost");
}

INSTANTIATE_TEST_SUITE_P(Backends, RecoveryTest, ::testing::ValuesIn(AllBackends()), BackendName);

}  // namespace
}  // namespace wt
