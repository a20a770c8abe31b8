// Jobs that fail in every way a process can: non-zero exit, death by a
// signal, running past the timeout, killing their own worker. The worker
// survives what it should, keeps the transcript of each attempt, and a job
// that keeps killing workers is quarantined.
#include <signal.h>

#include <iostream>
#include <set>

#include "harness.h"

namespace wt {
namespace {

using warden::JobState;

class FailureTest : public IntegrationTest {};

int64_t DurationMs(const warden::AttemptInfo& a) {
  return a.finished_at ? *a.finished_at - a.claimed_at : -1;
}

TEST_P(FailureTest, JobThatKillsItsWorkerIsQuarantinedAsCrashLoop) {
  // The job's parent is the supervisor shim; the shim's parent is the worker.
  const std::string kill_worker =
      "log start $$; W=$(cut -d' ' -f4 /proc/$PPID/stat); log kill $W; kill -9 $W; sleep 30";
  std::vector<Worker*> workers = {&StartWorker("a"), &StartWorker("b"), &StartWorker("c")};
  const int64_t id = Add(Job(kill_worker), {"--max-crashes", "2"});
  ASSERT_GT(id, 0);

  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kDead); }));
  const Json job = Show(id);
  EXPECT_EQ(job["state"], "dead");
  EXPECT_EQ(job["last_error"], "crash_loop");
  EXPECT_EQ(job["crashes"], 2);
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["outcome"], "lost");
  EXPECT_EQ(job["attempts"][1]["outcome"], "lost");
  EXPECT_NE(job["attempts"][0]["worker"], job["attempts"][1]["worker"]);

  // Exactly the two workers that ran it died; the third lives on.
  const auto kills = LedgerFor(id, "kill");
  ASSERT_EQ(kills.size(), 2u);
  std::set<pid_t> killed;
  for (const auto& k : kills) killed.insert(static_cast<pid_t>(std::stol(k.args.at(0))));
  ASSERT_EQ(killed.size(), 2u);
  for (Worker* w : workers) {
    if (killed.count(w->pid())) {
      EXPECT_TRUE(w->proc->WaitExit(Millis(5000)));
      EXPECT_EQ(w->proc->ExitCode(), 128 + SIGKILL);
    } else {
      EXPECT_FALSE(w->proc->Exited()) << "an innocent worker died";
    }
  }
  EXPECT_EQ(Stats()["recovery"]["crash_loops"], 1);
  // Nothing runs it a third time.
  const int64_t marker = Add(Job("log marker"));
  ASSERT_TRUE(WaitFor([&] { return JobInState(marker, JobState::kSucceeded); }));
  EXPECT_EQ(LedgerFor(id, "start").size(), 2u);

  // Two rescued attempts of one job: `jobs --rescued` lists the one job
  // stats counts in rescued_jobs (the overview's link goes there).
  EXPECT_EQ(Stats()["recovery"]["rescued_attempts"], 2);
  EXPECT_EQ(Stats()["recovery"]["rescued_jobs"], 1);
  CliResult rescued = Cli({"jobs", "--rescued"});
  ASSERT_EQ(rescued.exit_code, 0) << rescued.err;
  ASSERT_EQ(rescued.json.size(), 1u) << rescued.out;
  EXPECT_EQ(rescued.json[0].value("id", int64_t{0}), id);
}

TEST_P(FailureTest, JobKilledBySignalIsACrashAndHitsTheCrashBudget) {
  Worker& w = StartWorker("w");
  const int64_t id = Add(Job("log start $$; kill -9 $$"), {"--max-crashes", "2"});
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kDead); }));
  const Json job = Show(id);
  EXPECT_EQ(job["last_error"], "crash_loop");
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  for (const Json& a : job["attempts"]) {
    EXPECT_EQ(a["outcome"], "crash");
    EXPECT_EQ(a["error"]["kind"], "crash");
    EXPECT_EQ(a["error"]["signal"], SIGKILL);
    EXPECT_TRUE(a["error"]["exit_code"].is_null());
  }
  EXPECT_FALSE(w.proc->Exited());
  EXPECT_EQ(LedgerFor(id, "start").size(), 2u);

  // `jobs --error-kind crash_loop` lists exactly what the crash-loop count
  // counts (the dashboard's overview links that count to this filter).
  const int64_t failed = Add(Job("exit 3"), {"--max-attempts", "1"});
  ASSERT_TRUE(WaitFor([&] { return JobInState(failed, JobState::kDead); }));
  auto ids = [&](const std::string& kind) {
    CliResult r = Cli({"jobs", "--error-kind", kind});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<int64_t> out;
    for (const Json& j : r.json) out.push_back(j.value("id", int64_t{0}));
    return out;
  };
  EXPECT_EQ(ids("crash_loop"), std::vector<int64_t>{id});
  EXPECT_EQ(Stats()["recovery"]["crash_loops"], 1);
  EXPECT_EQ(ids("error"), std::vector<int64_t>{failed});
  EXPECT_EQ(ids("timeout"), std::vector<int64_t>{});
  CliResult dry = Cli({"jobs", "delete", "--error-kind", "crash_loop", "--dry-run"});
  EXPECT_EQ(dry.json.value("count", -1), 1) << dry.out << dry.err;
  CliResult bad = Cli({"jobs", "--error-kind", "crashed"}, /*json=*/false);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(bad.err,
            "warden: unknown error kind 'crashed' (error, crash, timeout, lost, released, "
            "crash_loop, cancelled)\n");
}

TEST_P(FailureTest, TimeoutStopsTheJobWithTermThenKillAndRetriesPerPolicy) {
  Worker& w = StartWorker("w");
  // Ignores SIGTERM (and so does its `sleep`): needs the SIGKILL after the grace.
  const int64_t stubborn = Add(Job("log start $$; trap '' TERM; sleep 30"),
                               {"--timeout", "500ms", "--max-attempts", "2"});
  // Dies of the SIGTERM itself.
  const int64_t polite =
      Add(Job("log start $$; sleep 30"), {"--timeout", "500ms", "--retry", "none"});
  ASSERT_GT(stubborn, 0);
  ASSERT_GT(polite, 0);

  ASSERT_TRUE(WaitFor([&] {
    return JobInState(stubborn, JobState::kDead) && JobInState(polite, JobState::kDead);
  }));
  auto job = GetJob(stubborn);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->last_error, warden::ErrorKind::kTimeout);
  EXPECT_EQ(job->charged, 2);
  ASSERT_EQ(job->attempts.size(), 2u);
  for (const auto& a : job->attempts) {
    ASSERT_TRUE(a.error);
    EXPECT_EQ(a.error->kind, warden::ErrorKind::kTimeout);
    EXPECT_EQ(a.error->signal, SIGKILL) << "TERM was ignored, so the grace ends in KILL";
    std::cout << "[ measure  ] stubborn attempt " << a.attempt << " ran " << DurationMs(a)
              << " ms (timeout 500 ms + grace 200 ms)\n";
    EXPECT_GE(DurationMs(a), 650);
    EXPECT_LT(DurationMs(a), 5000);
  }
  for (const auto& s : LedgerFor(stubborn, "start")) EXPECT_TRUE(Gone(ProcOf(s)));

  job = GetJob(polite);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->last_error, warden::ErrorKind::kTimeout);
  ASSERT_EQ(job->attempts.size(), 1u);
  ASSERT_TRUE(job->attempts[0].error);
  EXPECT_EQ(job->attempts[0].error->signal, SIGTERM);
  EXPECT_GE(DurationMs(job->attempts[0]), 450);

  const Json shown = Show(stubborn);
  EXPECT_EQ(shown["last_error"], "timeout");
  EXPECT_EQ(shown["attempts"][0]["error"]["kind"], "timeout");
  EXPECT_FALSE(w.proc->Exited());
}

TEST_P(FailureTest, CrashingJobsKeepTheirTranscriptAndSpareTheWorker) {
  Worker& w = StartWorker("w");
  const int64_t failing =
      Add(Job("log start; echo 'boom: disk on fire' >&2; exit 3"), {"--max-attempts", "2"});
  const int64_t segv =
      Add(Job("log start; echo 'about to segfault' >&2; kill -SEGV $$"), {"--retry", "none"});
  ASSERT_GT(failing, 0);
  ASSERT_GT(segv, 0);
  ASSERT_TRUE(WaitFor(
      [&] { return JobInState(failing, JobState::kDead) && JobInState(segv, JobState::kDead); }));

  Json job = Show(failing);
  EXPECT_EQ(job["last_error"], "error");
  EXPECT_EQ(job["charged_attempts"], 2);
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  for (const Json& a : job["attempts"]) {
    EXPECT_EQ(a["outcome"], "error");
    EXPECT_EQ(a["error"]["kind"], "error");
    EXPECT_EQ(a["error"]["exit_code"], 3);
    EXPECT_TRUE(a["error"]["signal"].is_null());
    EXPECT_NE(a["error"]["stderr_tail"].get<std::string>().find("boom: disk on fire"),
              std::string::npos);
  }

  job = Show(segv);
  EXPECT_EQ(job["last_error"], "crash");
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  const Json& a = job["attempts"][0];
  EXPECT_EQ(a["error"]["kind"], "crash");
  EXPECT_EQ(a["error"]["signal"], SIGSEGV);
  EXPECT_TRUE(a["error"]["exit_code"].is_null());
  EXPECT_NE(a["error"]["stderr_tail"].get<std::string>().find("about to segfault"),
            std::string::npos);

  // The worker is unharmed and still runs jobs.
  const int64_t ok = Add(Job("log ok"));
  ASSERT_TRUE(WaitFor([&] { return JobInState(ok, JobState::kSucceeded); }));
  EXPECT_FALSE(w.proc->Exited());
  bool active = false;
  for (const Json& row : Workers()) {
    if (row["pid"] == w.pid()) active = row["state"] == "active";
  }
  EXPECT_TRUE(active);
}

// A job's control lines on fd 3 are outside input: a value nested 100,000
// deep used to overflow the worker's stack when it was stored.
TEST_P(FailureTest, DeeplyNestedControlLineIsIgnoredAndTheWorkerLivesOn) {
  Worker& w = StartWorker("w");
  const int64_t id = Add(Job("d=$(head -c 100000 /dev/zero | tr '\\0' '['); "
                             "echo \"checkpoint $d\" >&3; echo \"result $d\" >&3; "
                             "echo 'checkpoint {\"i\":1}' >&3; log start; exit 4"),
                         {"--retry", "none"});
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kDead); })) << w.Log();
  const Json job = Show(id);
  EXPECT_EQ(job["checkpoint"], (Json{{"i", 1}})) << "the valid line after it still counts";
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  const std::string tail = job["attempts"][0]["error"]["stderr_tail"].get<std::string>();
  EXPECT_NE(tail.find("ignored checkpoint line: its value nests deeper than 512 levels"),
            std::string::npos)
      << tail;
  EXPECT_NE(tail.find("ignored result line"), std::string::npos) << tail;
  EXPECT_FALSE(w.proc->Exited()) << w.Log();
}

// A command's stderr is any bytes; PostgreSQL text holds neither NUL nor
// invalid UTF-8. The outcome must still be recorded (it was dropped, and the
// job left to a later rescue as if its worker had lost it).
TEST_P(FailureTest, StderrThatIsNotTextKeepsTheOutcome) {
  Worker& w = StartWorker("w");
  const int64_t id = Add(Job("log start; printf 'bad \\377 nul \\000 end' >&2; exit 3"),
                         {"--retry", "none"});
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kDead); })) << w.Log();
  const Json job = Show(id);
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["outcome"], "error");
  EXPECT_EQ(job["attempts"][0]["error"]["exit_code"], 3);
  const std::string tail = job["attempts"][0]["error"]["stderr_tail"].get<std::string>();
  EXPECT_EQ(tail.rfind("bad ", 0), 0u) << tail;
  EXPECT_NE(tail.find(" end"), std::string::npos) << tail;
  EXPECT_EQ(Stats()["recovery"]["fenced_writes"], 0);
  EXPECT_FALSE(w.LogHas("dropped")) << w.Log();
}

INSTANTIATE_TEST_SUITE_P(Backends, FailureTest, ::testing::ValuesIn(AllBackends()), BackendName);

}  // namespace
}  // namespace wt
