// What a worker says and when it stops by itself: a line per finished
// attempt, its queues and tasks at start-up, the note of a successful
// attempt (fd-3 control lines it ignored), the command jobs it skips
// without --allow-cmd, and --exit-when-idle leaving what it cannot run.
#include "harness.h"

namespace wt {
namespace {

class WorkerVoiceTest : public IntegrationTest {
 protected:
  // `warden worker FLAGS... --exit-when-idle` to its exit (a test failure
  // if it is still running after 60 s).
  CliResult RunIdleWorker(std::vector<std::string> flags) {
    std::vector<std::string> argv = {WARDEN_BIN, "--db", db(), "worker", "--exit-when-idle"};
    const auto fast = FastFlags();
    argv.insert(argv.end(), fast.begin(), fast.end());
    argv.insert(argv.end(), flags.begin(), flags.end());
    return RunToExit(argv, dir() + "/idle-" + std::to_string(++runs_), Millis(60'000));
  }
  int64_t AddTask(const std::string& task, std::vector<std::string> flags = {}) {
    std::vector<std::string> args = {"add", task};
    args.insert(args.end(), flags.begin(), flags.end());
    CliResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.json.value("id", int64_t{-1});
  }

 private:
  int runs_ = 0;
};

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_P(WorkerVoiceTest, ExitWhenIdleLeavesWhatItCannotRunAndSaysSo) {
  const int64_t mine = AddTask("t");
  AddTask("other-task");
  AddTask("t", {"--queue", "elsewhere"});
  AddTask("t", {"--delay", "1h"});
  Add("true");  // a command job, and this worker has no --allow-cmd
  CliResult r = RunIdleWorker({"--task", "t=true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(JobInState(mine, warden::JobState::kSucceeded));
  EXPECT_TRUE(Has(r.err, "nothing left that it can run; exiting (--exit-when-idle)")) << r.err;
  EXPECT_TRUE(Has(r.err, "1 job on queue default of task other-task")) << r.err;
  EXPECT_TRUE(Has(r.err, "1 job on queue elsewhere of task t")) << r.err;
  EXPECT_TRUE(Has(r.err, "of task t, the next due in")) << r.err;
  EXPECT_TRUE(Has(r.err, "1 job on queue default (command jobs)")) << r.err;
  // Said once, however many idle polls it made.
  const std::string skipped = "this worker does not run command jobs";
  EXPECT_TRUE(Has(r.err, skipped)) << r.err;
  EXPECT_EQ(r.err.find(skipped), r.err.rfind(skipped)) << r.err;
}

TEST_P(WorkerVoiceTest, ExitWhenIdleStillWaitsForARetryOfItsOwnWork) {
  // Fails its first attempt, then succeeds: the retry (backed off about a
  // second) keeps the worker.
  const std::string flag = dir() + "/failed-once";
  const int64_t id = Add("test -e " + flag + " || { touch " + flag + "; exit 1; }");
  CliResult r = RunIdleWorker({"--allow-cmd"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(JobInState(id, warden::JobState::kSucceeded)) << r.err;
}

TEST_P(WorkerVoiceTest, SaysWhatItRunsAndALinePerFinishedAttempt) {
  const int64_t ok = Add("echo fine");
  const int64_t bad = Add("echo 'Traceback...' >&2; echo 'ValueError: no such user' >&2; exit 3",
                          {"--max-attempts", "1"});
  CliResult r = RunIdleWorker({"--allow-cmd", "--task", "resize=true", "--queues", "default,q2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "queues default, q2; task resize and command jobs")) << r.err;
  EXPECT_TRUE(Has(r.err, "job " + std::to_string(ok) + " (command) attempt 1: succeeded in "))
      << r.err;
  // A failure names its kind, its message and its last stderr line.
  EXPECT_TRUE(Has(r.err, "job " + std::to_string(bad) + " (command) attempt 1: error after "))
      << r.err;
  EXPECT_TRUE(Has(r.err, "exited with status 3 (stderr: ValueError: no such user)")) << r.err;
  EXPECT_FALSE(Has(r.err, ": starting")) << "a start is a debug line\n" << r.err;

  const int64_t again = Add("true");
  r = RunIdleWorker({"--allow-cmd", "--log-level", "debug"});
  EXPECT_TRUE(Has(r.err, "job " + std::to_string(again) + " (command) attempt 1: starting"))
      << r.err;
  const int64_t quiet = Add("true");
  r = RunIdleWorker({"--allow-cmd", "--log-level", "warn"});
  EXPECT_TRUE(JobInState(quiet, warden::JobState::kSucceeded));
  EXPECT_FALSE(Has(r.err, "succeeded in")) << r.err;
  EXPECT_FALSE(Has(r.err, "started as worker")) << r.err;
}

TEST_P(WorkerVoiceTest, WithJsonItPrintsItsCountsWhenItEnds) {
  Add("true");
  Add("exit 1", {"--max-attempts", "1"});
  CliResult r = RunIdleWorker({"--allow-cmd", "--name", "counted", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(r.json.is_object()) << r.out;
  EXPECT_EQ(r.json["name"], "counted") << r.out;
  EXPECT_EQ(r.json["succeeded"], 1) << r.out;
  EXPECT_EQ(r.json["failed"], 1) << r.out;
  EXPECT_EQ(r.json["fenced_off"], 0) << r.out;
  EXPECT_TRUE(r.json["worker"].is_number_integer()) << r.out;
  EXPECT_TRUE(Has(r.err, "started as worker")) << "the log stays on stderr";
}

TEST_P(WorkerVoiceTest, UnknownLogLevelIsAUsageError) {
  CliResult r = RunIdleWorker({"--allow-cmd", "--log-level", "loud"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "--log-level must be error, warn, info or debug, not 'loud'")) << r.err;
}

TEST_P(WorkerVoiceTest, ASuccessfulAttemptKeepsAndLogsItsIgnoredControlLines) {
  const int64_t id = Add("echo 'checkpoint {bad' >&3; echo 'frobnicate 1' >&3; echo done");
  CliResult r = RunIdleWorker({"--allow-cmd"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "ignored checkpoint line: its value is not valid JSON: {bad")) << r.err;
  EXPECT_TRUE(Has(r.err, "ignored control line")) << r.err;
  const Json job = Show(id);
  ASSERT_EQ(job["state"], "succeeded") << job.dump(2);
  ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
  const Json& a = job["attempts"][0];
  EXPECT_EQ(a["outcome"], "succeeded") << a.dump(2);
  ASSERT_TRUE(a["note"].is_string()) << a.dump(2);
  EXPECT_TRUE(Has(a["note"].get<std::string>(), "ignored checkpoint line")) << a.dump(2);
  EXPECT_TRUE(Has(a["note"].get<std::string>(), "frobnicate 1")) << a.dump(2);
  EXPECT_EQ(job["result"], Json({{"stdout", "done\n"}})) << job.dump(2);
  // A clean success has no note.
  const int64_t clean = Add("true");
  RunIdleWorker({"--allow-cmd"});
  EXPECT_TRUE(Show(clean)["attempts"][0]["note"].is_null()) << Show(clean).dump(2);
}

TEST_P(WorkerVoiceTest, JobsNoActiveWorkerCanRunAreNamed) {
  warden::JobSpec spec;
  spec.task = "resize";
  auto served = client().AnyWorkerRuns(spec);
  ASSERT_TRUE(served.has_value()) << served.error().ToString();
  EXPECT_FALSE(*served);
  AddTask("resize");
  Add("true");
  auto unserved = client().Unserved();
  ASSERT_TRUE(unserved.has_value()) << unserved.error().ToString();
  EXPECT_EQ(unserved->size(), 2u);

  // A worker for `resize` (and command jobs, as StartWorker gives) on the
  // default queue: the jobs wait for it no longer; one on another queue does.
  StartWorker("w", {"--task", "resize=sleep 30", "--queues", "default"});
  served = client().AnyWorkerRuns(spec);
  ASSERT_TRUE(served.has_value());
  EXPECT_TRUE(*served);
  AddTask("resize", {"--queue", "nobody-listens"});
  unserved = client().Unserved();
  ASSERT_TRUE(unserved.has_value());
  ASSERT_EQ(unserved->size(), 1u);
  EXPECT_EQ((*unserved)[0].queue, "nobody-listens");
  EXPECT_EQ((*unserved)[0].task, "resize");
  EXPECT_EQ((*unserved)[0].count, 1);
}

TEST_P(WorkerVoiceTest, TheCliNamesJobsNoActiveWorkerRuns) {
  // add: stored, with a note on stderr (and "served" in --json).
  CliResult add = Cli({"add", "resize"}, /*json=*/false);
  EXPECT_EQ(add.exit_code, 0) << add.err;
  EXPECT_EQ(add.out, "1\n");
  EXPECT_TRUE(Has(add.err, "warden: note: no active worker runs job 1 yet; it waits until one "
                           "does (start one with: warden worker --task resize=COMMAND)"))
      << add.err;
  CliResult cmd = Cli({"add", "--cmd", "true", "--queue", "q2"});
  EXPECT_EQ(cmd.json["served"], false) << cmd.out;
  EXPECT_TRUE(Has(cmd.err, "warden worker --queues q2 --allow-cmd")) << cmd.err;

  const Json stats = Stats();
  ASSERT_TRUE(stats["unserved"].is_array()) << stats.dump(2);
  EXPECT_EQ(stats["unserved"].size(), 2u) << stats.dump(2);
  const std::string said = "waiting for a worker (no active worker runs them): 1 job on queue "
                           "default of task resize; 1 job on queue q2 (command jobs)";
  EXPECT_TRUE(Has(Cli({"stats"}, false).out, said)) << Cli({"stats"}, false).out;
  EXPECT_TRUE(Has(Cli({"jobs"}, false).err, "warden: note: " + said)) << Cli({"jobs"}, false).err;
  EXPECT_TRUE(Has(Cli({"jobs", "show", "1"}, false).out,
                  "waiting:   no active worker runs it (start one with: warden worker --task "
                  "resize=COMMAND)"));

  // A worker that runs them: nothing is said any more.
  StartWorker("w", {"--task", "resize=true", "--queues", "default,q2"});
  CliResult next = Cli({"add", "resize"});
  EXPECT_EQ(next.json["served"], true) << next.out;
  EXPECT_EQ(next.err, "");
  ASSERT_TRUE(WaitFor([&] { return Stats()["unserved"].empty(); })) << Stats().dump(2);
  EXPECT_FALSE(Has(Cli({"stats"}, false).out, "waiting for a worker")) << Cli({"stats"}, false).out;
}

INSTANTIATE_TEST_SUITE_P(Backends, WorkerVoiceTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
