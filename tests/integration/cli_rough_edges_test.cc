// The CLI's rough edges (issue 19), each as a new user of Sidekiq, Celery or
// BullMQ would meet it: compound and bounded durations, counts in good
// English, `workers` showing the live workers, `--version`, waiting for one
// job (`wait ID`, `add --wait`), `add --at TIME`, and "did you mean" for a
// mistyped command or flag. Both backends.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <regex>

#include "harness.h"

namespace wt {
namespace {

class RoughEdgesTest : public IntegrationTest {
 protected:
  // One line on stderr, starting with "warden: ".
  static bool OneLine(const CliResult& r) {
    return r.err.rfind("warden: ", 0) == 0 && r.err.find('\n') == r.err.size() - 1;
  }
};

TEST_P(RoughEdgesTest, DurationsAreCompoundAndBounded) {
  const int64_t id = Add("true", {"--delay", "1h30m", "--timeout", "2m30s", "--start-deadline",
                                  "1d12h"});
  ASSERT_GT(id, 0);
  const auto job = GetJob(id);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->run_at - job->created_at, 5'400'000);
  EXPECT_EQ(job->timeout, Millis(150'000));
  ASSERT_TRUE(job->start_deadline_at.has_value());
  EXPECT_EQ(*job->start_deadline_at - job->run_at, 129'600'000);
  EXPECT_EQ(Add("true", {"--timeout", "365d"}) > 0, true);

  const struct {
    std::vector<std::string> args;
    std::string message;
  } kCases[] = {
      {{"--timeout", "366d"},
       "warden: --timeout: invalid duration '366d': longer than the limit, 365d (examples: "
       "250ms, 10s, 5m, 2h, 1h30m)\n"},
      {{"--lease", "9223372036854775808ms"},
       "warden: --lease: invalid duration '9223372036854775808ms': longer than the limit, 365d "
       "(examples: 250ms, 10s, 5m, 2h, 1h30m)\n"},
      {{"--delay", "30m1h"},
       "warden: --delay: invalid duration '30m1h': units must go largest first, each once "
       "(examples: 250ms, 10s, 5m, 2h, 1h30m)\n"},
      {{"--delay", "2m30"},
       "warden: --delay: invalid duration '2m30': missing unit (examples: 250ms, 10s, 5m, 2h, "
       "1h30m)\n"},
  };
  for (const auto& c : kCases) {
    std::vector<std::string> args = {"add", "--cmd", "true"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CliResult r = Cli(args, /*json=*/false);
    EXPECT_EQ(r.exit_code, 2) << c.args[1];
    EXPECT_EQ(r.err, c.message);
    EXPECT_EQ(r.out, "");
  }
  // Every duration flag, not only add's.
  CliResult r = Cli({"wait", "--timeout", "400d"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("longer than the limit, 365d"), std::string::npos) << r.err;
  r = Cli({"worker", "--allow-cmd", "--shutdown-timeout", "1000d"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("longer than the limit, 365d"), std::string::npos) << r.err;
  EXPECT_EQ(client().CountUnfinished().value(), 2);  // the two added above, no more
}

TEST_P(RoughEdgesTest, CountsOfOneAreSingular) {
  ASSERT_GT(Add("true"), 0);
  CliResult r = Cli({"wait", "--timeout", "100ms"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "warden: 1 job still unfinished after 100ms\n");
  ASSERT_GT(Add("true"), 0);
  r = Cli({"wait", "--timeout", "100ms"}, /*json=*/false);
  EXPECT_EQ(r.err, "warden: 2 jobs still unfinished after 100ms\n");

  r = Cli({"stats"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("recovery: 0 attempts rescued, 0 writes fenced off, 0 crash loops"),
            std::string::npos)
      << r.out;

  // A worker that holds one job, released: "1 job recovered".
  StartWorker("holder", FastFlags({{"--sweep-interval", "1h"}}));
  const int64_t id = Add("sleep 30");
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kRunning); }));
  r = Cli({"workers", "release", "holder", "--force"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "worker holder declared dead; 1 job recovered\n");
  r = Cli({"stats"}, /*json=*/false);
  EXPECT_NE(r.out.find("recovery: 1 attempt rescued,"), std::string::npos) << r.out;
}

TEST_P(RoughEdgesTest, WorkersShowsTheLiveOnesAndAllShowsEveryIncarnation) {
  // "api" restarted: its first incarnation stopped, a row of its own.
  Worker& first = StartWorker("api");
  ASSERT_TRUE(first.proc->Signal(SIGTERM));
  ASSERT_TRUE(first.proc->WaitExit(kDeadline));
  StartWorker("api");
  StartWorker("billing");

  auto names = [](const Json& rows) {
    std::vector<std::string> out;
    for (const Json& w : rows) out.push_back(w.value("name", "") + ":" + w.value("state", ""));
    return out;
  };
  CliResult r = Cli({"workers"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(names(r.json), (std::vector<std::string>{"api:active", "billing:active"}))
      << r.out;
  r = Cli({"workers", "--all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(names(r.json),
            (std::vector<std::string>{"api:stopped", "api:active", "billing:active"}))
      << r.out;

  // The table follows the same filter: one line a worker, under a header.
  auto lines = [](const std::string& text) {
    return std::count(text.begin(), text.end(), '\n');
  };
  r = Cli({"workers"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines(r.out), 3) << r.out;
  EXPECT_EQ(r.out.find("stopped"), std::string::npos) << r.out;
  r = Cli({"workers", "--all"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines(r.out), 4) << r.out;
  EXPECT_NE(r.out.find("stopped"), std::string::npos) << r.out;
}

TEST_P(RoughEdgesTest, VersionNamesTheCommitAndBuildType) {
  for (const bool json : {false, true}) {
    CliResult r = Cli({"--version"}, json);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(r.out, m,
                                 std::regex("warden 0\\.1\\.0 \\(commit ([0-9a-f]{7,}(-dirty)?|"
                                            "unknown), (Release|Debug|RelWithDebInfo|"
                                            "MinSizeRel|unknown)\\)\n")))
        << r.out;
    // The commit is one of this checkout's (the binary sits in a build
    // directory inside it), or "unknown" when built outside git.
    const std::string commit = m[1].str().substr(0, m[1].str().find('-'));
    const std::string bin = WARDEN_BIN;
    const std::string bin_dir = bin.substr(0, bin.rfind('/'));
    CliResult git = RunToExit({"/usr/bin/git", "-C", bin_dir, "rev-parse", "--git-dir"},
                              dir() + "/git", Millis(10'000));
    if (git.exit_code == 0) {
      EXPECT_NE(commit, "unknown");
      git = RunToExit({"/usr/bin/git", "-C", bin_dir, "cat-file", "-e", commit + "^{commit}"},
                      dir() + "/git", Millis(10'000));
      EXPECT_EQ(git.exit_code, 0) << commit << " is no commit of " << bin_dir;
    } else {
      EXPECT_EQ(commit, "unknown");
    }
  }
}

TEST_P(RoughEdgesTest, WaitForOneJobPrintsItsOutcome) {
  StartWorker("w");
  const int64_t ok = Add("echo hello");
  const int64_t bad = Add("echo broken >&2; exit 3", {"--max-attempts", "1"});
  const int64_t held = Add("true", {"--delay", "1h"});
  ASSERT_GT(ok, 0);
  ASSERT_GT(bad, 0);
  ASSERT_GT(held, 0);

  CliResult r = Cli({"wait", std::to_string(ok)}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "job " + std::to_string(ok) + " succeeded\nresult: {\"stdout\":\"hello\\n\"}\n");
  EXPECT_EQ(r.err, "");
  r = Cli({"wait", std::to_string(ok)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json, Show(ok));  // what `jobs show --json` prints

  r = Cli({"wait", std::to_string(bad), "--timeout", "20s"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out,
            "job " + std::to_string(bad) + " dead\nlast error: error: exited with status 3\n");
  EXPECT_EQ(r.err, "warden: job " + std::to_string(bad) + " ended dead\n");
  r = Cli({"wait", std::to_string(bad)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.json.value("state", ""), "dead") << r.out;

  // Cancelled ends it too; a timeout leaves the job as it is.
  r = Cli({"wait", std::to_string(held), "--timeout", "50ms"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "warden: job " + std::to_string(held) +
                       " still scheduled after 50ms (it is left as it is)\n");
  EXPECT_EQ(r.out, "");
  r = Cli({"wait", std::to_string(held), "--timeout", "50ms"});
  EXPECT_EQ(r.json["error"]["code"], "deadline_exceeded") << r.out;
  ASSERT_EQ(Cli({"jobs", "cancel", std::to_string(held)}).exit_code, 0);
  r = Cli({"wait", std::to_string(held)}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "job " + std::to_string(held) + " cancelled\n");

  r = Cli({"wait", "999999"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "warden: no job with id 999999\n");
  r = Cli({"wait", "abc"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "warden: 'abc' is not a job id\n");
  // Plain `wait` still waits for the whole queue.
  r = Cli({"wait", "--timeout", "20s"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json, Json({{"unfinished", 0}}));
}

TEST_P(RoughEdgesTest, AddWaitEnqueuesThenWaits) {
  StartWorker("w");
  CliResult r = Cli({"add", "--cmd", "true", "--wait"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_match(r.out, std::regex("job [0-9]+ succeeded\n"))) << r.out;
  r = Cli({"add", "--cmd", "exit 4", "--max-attempts", "1", "--wait", "--wait-timeout", "20s"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.json.value("state", ""), "dead") << r.out;
  EXPECT_TRUE(r.json.contains("attempts")) << r.out;
  // Not run before the wait gives up: exit 1, the job stays queued.
  r = Cli({"add", "--cmd", "true", "--delay", "1h", "--wait", "--wait-timeout", "100ms"},
          /*json=*/false);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(std::regex_match(
      r.err, std::regex("warden: job [0-9]+ still scheduled after 100ms \\(it is left as it "
                        "is\\)\n")))
      << r.err;
  r = Cli({"add", "--cmd", "true", "--wait-timeout", "1s"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--wait"), std::string::npos) << r.err;
}

TEST_P(RoughEdgesTest, AddAtRunsAtThatTime) {
  using std::chrono::system_clock;
  const int64_t id = Add("true", {"--at", "2026-11-26T09:00:00+01:00"});
  ASSERT_GT(id, 0);
  const int64_t future_ms = 1'796'980'800'000;  // 2026-12-11T09:20:00Z, well ahead
  const int64_t later = Add("true", {"--at", "2026-12-11T10:20:00.250+01:00"});
  ASSERT_GT(later, 0);
  const auto job = GetJob(later);
  ASSERT_TRUE(job.has_value());
  const int64_t now = std::chrono::duration_cast<Millis>(
                          system_clock::now().time_since_epoch()).count();
  if (now < future_ms) {
    EXPECT_EQ(job->state, warden::JobState::kScheduled);
    EXPECT_EQ(job->run_at, future_ms + 250);
  }
  // A time in the past runs now.
  const int64_t past = Add("true", {"--at", "2001-01-01T00:00:00Z"});
  ASSERT_GT(past, 0);
  EXPECT_EQ(GetJob(past)->state, warden::JobState::kAvailable);
  EXPECT_GE(GetJob(past)->run_at, now - 60'000);

  const struct {
    std::vector<std::string> args;
    std::string err;
  } kCases[] = {
      {{"--at", "tomorrow"},
       "warden: --at: invalid time 'tomorrow': not a date: want YYYY-MM-DD (examples: "
       "2026-11-26T09:00:00Z, 2026-11-26T10:00:00+01:00)\n"},
      {{"--at", "2026-11-26T09:00:00"},
       "warden: --at: invalid time '2026-11-26T09:00:00': missing the offset: end with Z (UTC) "
       "or +HH:MM (examples: 2026-11-26T09:00:00Z, 2026-11-26T10:00:00+01:00)\n"},
      {{"--at", "2026-02-30T09:00:00Z"},
       "warden: --at: invalid time '2026-02-30T09:00:00Z': day 30 does not exist in that "
       "month (examples: 2026-11-26T09:00:00Z, 2026-11-26T10:00:00+01:00)\n"},
      {{"--at", "9999-01-01T00:00:00Z"},
       "warden: --at: 9999-01-01T00:00:00.000Z is more than 365d from now, the limit\n"},
  };
  for (const auto& c : kCases) {
    std::vector<std::string> args = {"add", "--cmd", "true"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CliResult r = Cli(args, /*json=*/false);
    EXPECT_EQ(r.exit_code, 2) << c.args[1];
    EXPECT_EQ(r.err, c.err);
  }
  CliResult r = Cli({"add", "--cmd", "true", "--at", "2001-01-01T00:00:00Z", "--delay", "1s"},
                    /*json=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
  // The API says the same of a spec with both.
  warden::JobSpec both;
  both.task = "t";
  both.delay = Millis(1'000);
  both.run_at = now;
  auto added = client().Enqueue(both);
  ASSERT_FALSE(added.has_value());
  EXPECT_EQ(added.error().code(), warden::StatusCode::kInvalidArgument);
  EXPECT_EQ(added.error().message(), "give a delay or a run_at time, not both");
  EXPECT_EQ(client().CountUnfinished().value(), 3);
}

TEST_P(RoughEdgesTest, MistypedCommandsAndFlagsGetASuggestion) {
  const struct {
    std::vector<std::string> args;
    std::string err;
  } kCases[] = {
      {{"stat"},
       "warden: usage: unknown command 'stat'; did you mean 'stats'? (see warden --help)\n"},
      {{"wrker"},
       "warden: usage: unknown command 'wrker'; did you mean 'worker'? (see warden --help)\n"},
      {{"jbos"},
       "warden: usage: unknown command 'jbos'; did you mean 'jobs'? (see warden --help)\n"},
      {{"frobnicate"}, "warden: usage: unknown command 'frobnicate' (see warden --help)\n"},
      {{"add", "t", "--queu", "q"},
       "warden: usage: The following argument was not expected: --queu; did you mean "
       "'--queue'? (see warden --help)\n"},
      {{"add", "t", "--priorty=3"},
       "warden: usage: The following argument was not expected: --priorty=3; did you mean "
       "'--priority'? (see warden --help)\n"},
      {{"jobs", "--stat", "dead"},
       "warden: usage: The following arguments were not expected: dead --stat; did you mean "
       "'--state'? (see warden --help)\n"},
      {{"jobs", "shwo", "1"},
       "warden: usage: The following arguments were not expected: 1 shwo; did you mean "
       "'show'? (see warden --help)\n"},
      {{"workers", "--al"},
       "warden: usage: The following argument was not expected: --al; did you mean '--all'? "
       "(see warden --help)\n"},
      {{"add", "t", "--jsn"},
       "warden: usage: The following argument was not expected: --jsn; did you mean "
       "'--json'? (see warden --help)\n"},
      {{"add", "t", "--frobnicate"},
       "warden: usage: The following argument was not expected: --frobnicate (see warden "
       "--help)\n"},
  };
  for (const auto& c : kCases) {
    CliResult r = Cli(c.args, /*json=*/false);
    EXPECT_EQ(r.exit_code, 2) << c.args[0];
    EXPECT_EQ(r.err, c.err);
    EXPECT_EQ(r.out, "");
  }
  CliResult r = Cli({"stat"});
  EXPECT_EQ(r.json["error"]["message"],
            "unknown command 'stat'; did you mean 'stats'? (see warden --help)")
      << r.out;
}

INSTANTIATE_TEST_SUITE_P(Backends, RoughEdgesTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
