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
       "warden: --delay: invalid duration '30m1h': units go largest first, each at most once "
       "(1h30m, not 30m1h) (examples: 250ms, 10s, 5m, 2h, 1h30m)\n"},
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

INSTANTIATE_TEST_SUITE_P(Backends, RoughEdgesTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
