// `--log-format json` (issue 22): every line a worker, `warden serve`,
// `warden wait` or `warden demo` writes on stderr is one JSON object with "time", "level", "pid"
// and "message" (and a worker's "worker"), and a line about a job carries its id in "job". Real
// workers: a job that succeeds, one that fails (its stderr, bytes that are not UTF-8 among them,
// quoted in the line), and a SIGKILLed worker whose job a second worker recovers and runs; `wait`
// on a job that fails, and on a queue that does not drain in time; the whole demo.
#include <signal.h>

#include <regex>
#include <set>
#include <sstream>

#include "harness.h"

namespace wt {
namespace {

using warden::JobState;

// The stderr of a process, line by line, each parsed (a line that is not
// a JSON object is a failure, named).
std::vector<Json> JsonLines(const std::string& log) {
  std::vector<Json> out;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(j.is_object()) << "not a JSON object: " << line;
    if (j.is_object()) out.push_back(std::move(j));
  }
  return out;
}

// The keys every line has, with their types; `worker`: the name a worker's
// lines carry ("" for serve's).
void ExpectCommonKeys(const std::vector<Json>& lines, const std::string& worker) {
  static const std::regex kTime(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  static const std::set<std::string> kLevels = {"error", "warn", "info", "debug"};
  for (const Json& j : lines) {
    ASSERT_TRUE(j.contains("time") && j["time"].is_string()) << j.dump();
    EXPECT_TRUE(std::regex_match(j["time"].get<std::string>(), kTime)) << j.dump();
    ASSERT_TRUE(j.contains("level") && j["level"].is_string()) << j.dump();
    EXPECT_EQ(kLevels.count(j["level"].get<std::string>()), 1u) << j.dump();
    EXPECT_TRUE(j.contains("pid") && j["pid"].is_number_integer()) << j.dump();
    EXPECT_TRUE(j.contains("message") && j["message"].is_string()) << j.dump();
    if (!worker.empty()) {
      EXPECT_EQ(j.value("worker", ""), worker) << j.dump();
    }
    // A line that names a job ("job 12 ...") carries it.
    const std::string message = j.value("message", "");
    std::smatch m;
    if (std::regex_search(message, m, std::regex(R"(^job (\d+)[ :])"))) {
      EXPECT_EQ(j.value("job", int64_t{0}), std::stoll(m[1].str())) << j.dump();
    }
  }
}

// The lines with "job" == id.
std::vector<Json> About(const std::vector<Json>& lines, int64_t id) {
  std::vector<Json> out;
  for (const Json& j : lines) {
    if (j.value("job", int64_t{0}) == id) out.push_back(j);
  }
  return out;
}

class LogFormatTest : public IntegrationTest {};

TEST_P(LogFormatTest, WorkerLinesAreJsonWithTheJobOnJobLines) {
  const std::vector<std::string> json = {"--log-format", "json"};
  auto flags = [&](std::vector<std::pair<std::string, std::string>> more = {}) {
    std::vector<std::string> f = FastFlags(more);
    f.insert(f.end(), json.begin(), json.end());
    return f;
  };
  Worker& a = StartWorker("json-a", flags(), 2);
  const int64_t ok = Add(Job("log ran"));
  const int64_t bad = Add(Job("printf 'boom \\377\\376 \"quoted\"\\n' >&2; exit 3"),
                          {"--retry", "none"});
  ASSERT_TRUE(WaitFor([&] {
    return JobInState(ok, JobState::kSucceeded) && JobInState(bad, JobState::kDead);
  })) << a.Log();
  // Each attempt's line follows its outcome's commit (Worker::Impl::LogWritten).
  ASSERT_TRUE(WaitFor([&] {
    const std::vector<Json> lines = JsonLines(a.Log());
    return !About(lines, ok).empty() && !About(lines, bad).empty();
  })) << a.Log();
  // Attempt 1 runs until its worker is killed; attempt 2 finishes.
  const int64_t rescued =
      Add(Job("log start; if [ \"$WARDEN_ATTEMPT\" = 1 ]; then sleep 30; fi; log done"));
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(rescued, 1, "start"); })) << a.Log();
  a.proc->Kill();

  Worker& b = StartWorker("json-b", flags(), 2);
  ASSERT_TRUE(WaitFor([&] { return JobInState(rescued, JobState::kSucceeded); })) << b.Log();
  ASSERT_TRUE(b.proc->Signal(SIGTERM));
  ASSERT_TRUE(b.proc->WaitExit(kDeadline)) << b.Log();
  EXPECT_EQ(b.proc->ExitCode(), 0) << b.Log();

  const std::vector<Json> la = JsonLines(a.Log());
  const std::vector<Json> lb = JsonLines(b.Log());
  ExpectCommonKeys(la, "json-a");
  ExpectCommonKeys(lb, "json-b");
  ASSERT_FALSE(la.empty());
  EXPECT_GT(la.front().value("pid", 0), 0);
  EXPECT_EQ(la.front().value("pid", 0), a.pid()) << la.front().dump();

  // The success: info, with its facts.
  const auto ok_lines = About(la, ok);
  ASSERT_EQ(ok_lines.size(), 1u) << a.Log();
  EXPECT_EQ(ok_lines[0]["level"], "info");
  EXPECT_EQ(ok_lines[0]["outcome"], "succeeded");
  EXPECT_EQ(ok_lines[0]["attempt"], 1);
  EXPECT_TRUE(ok_lines[0]["duration_ms"].is_number_integer()) << ok_lines[0].dump();
  EXPECT_GT(ok_lines[0].value("worker_id", int64_t{0}), 0) << ok_lines[0].dump();
  // The failure: warn, its kind and exit status, its stderr quoted in one
  // line of valid JSON.
  const auto bad_lines = About(la, bad);
  ASSERT_EQ(bad_lines.size(), 1u) << a.Log();
  EXPECT_EQ(bad_lines[0]["level"], "warn");
  EXPECT_EQ(bad_lines[0]["outcome"], "error");
  EXPECT_EQ(bad_lines[0]["exit_code"], 3);
  EXPECT_NE(bad_lines[0]["message"].get<std::string>().find("boom"), std::string::npos)
      << bad_lines[0].dump();
  // The killed worker's job: said by the worker that ran it again.
  const auto again = About(lb, rescued);
  ASSERT_FALSE(again.empty()) << b.Log();
  EXPECT_EQ(again.back()["outcome"], "succeeded") << b.Log();
  EXPECT_EQ(again.back()["attempt"], 2) << b.Log();
  bool proved = false, stopped = false;
  for (const Json& j : lb) {
    const std::string message = j.value("message", "");
    proved = proved || message.find("recovered") != std::string::npos;
    stopped = stopped || message.rfind("stopped: ", 0) == 0;
  }
  EXPECT_TRUE(proved) << "the rescue is not in B's log:\n" << b.Log();
  EXPECT_TRUE(stopped) << b.Log();
}

// The lines below do not depend on the backend: one is enough.
class LogFormatOneBackendTest : public LogFormatTest {};

// Errors too: a worker that cannot start says why on one JSON line.
TEST_P(LogFormatOneBackendTest, AWorkerThatCannotStartSaysWhyInJson) {
  CliResult r = Cli({"worker", "--allow-cmd", "--log-format", "json", "--lease", "1s",
                     "--heartbeat", "1s"},
                    /*json=*/false);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const std::vector<Json> lines = JsonLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0]["level"], "error");
  EXPECT_NE(lines[0]["message"].get<std::string>().find("three heartbeat intervals"),
            std::string::npos)
      << r.err;
  // A usage error CLI11 finds, before the command runs.
  r = Cli({"worker", "--log-format", "json", "--no-such-flag"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ASSERT_EQ(JsonLines(r.err).size(), 1u) << r.err;
}

TEST_P(LogFormatOneBackendTest, ServeLinesAreJson) {
  auto serve = Child::Spawn({WARDEN_BIN, "--db", db(), "serve", "--listen", "127.0.0.1:0",
                             "--log-format", "json"},
                            dir() + "/serve.out", dir() + "/serve.err");
  ASSERT_TRUE(WaitFor([&] {
    return serve->Stderr().find("serving on 127.0.0.1:") != std::string::npos ||
           serve->Exited();
  })) << serve->Stderr();
  ASSERT_TRUE(serve->Signal(SIGTERM));
  ASSERT_TRUE(serve->WaitExit(kDeadline)) << serve->Stderr();
  EXPECT_EQ(serve->ExitCode(), 0) << serve->Stderr();
  const std::vector<Json> lines = JsonLines(serve->Stderr());
  ExpectCommonKeys(lines, "");
  ASSERT_GE(lines.size(), 2u) << serve->Stderr();  // serving on ..., received SIGTERM
  for (const Json& j : lines) EXPECT_EQ(j.value("component", ""), "serve") << j.dump();
}

// `serve`'s maintenance row says trouble at warn, not at info: a server
// that finds its row's previous incarnation SIGKILLed declares it dead
// (the worker's warn line "unexpected shutdown of the previous ...").
TEST_P(LogFormatTest, ServesMaintenanceTroubleIsAWarnLine) {
  auto serve = [&](const std::string& name) {
    auto s = Child::Spawn({WARDEN_BIN, "--db", db(), "serve", "--listen", "127.0.0.1:0",
                           "--maintenance-name", "serve-m", "--log-format", "json"},
                          dir() + "/" + name + ".out", dir() + "/" + name + ".err");
    return s;
  };
  auto first = serve("first");
  ASSERT_TRUE(WaitFor([&] {
    CliResult r = Cli({"workers", "--json"});
    return r.out.find("\"serve-m\"") != std::string::npos;
  })) << first->Stderr();
  first->Kill();
  ASSERT_TRUE(first->WaitExit(kDeadline));
  auto second = serve("second");
  ASSERT_TRUE(WaitFor([&] {
    return second->Stderr().find("unexpected shutdown") != std::string::npos || second->Exited();
  })) << second->Stderr();
  ASSERT_TRUE(second->Signal(SIGTERM));
  ASSERT_TRUE(second->WaitExit(kDeadline)) << second->Stderr();
  const std::vector<Json> lines = JsonLines(second->Stderr());
  ExpectCommonKeys(lines, "");
  bool warned = false, routine = false;
  for (const Json& j : lines) {
    const std::string message = j.value("message", "");
    if (message.rfind("maintenance: ", 0) != 0) continue;
    if (message.find("unexpected shutdown of the previous 'serve-m'") != std::string::npos) {
      EXPECT_EQ(j.value("level", ""), "warn") << j.dump();
      EXPECT_EQ(message.rfind("maintenance: warning: ", 0), 0u) << j.dump();
      warned = true;
    } else if (j.value("level", "") == "info") {
      routine = true;
    }
  }
  EXPECT_TRUE(warned) << second->Stderr();
  EXPECT_TRUE(routine) << "routine lines stay at info: " << second->Stderr();
}

// `warden wait`: the failed job's line carries it, and its errors (a
// timeout) are JSON lines too.
TEST_P(LogFormatOneBackendTest, WaitLinesAreJson) {
  const int64_t bad = Add(Job("exit 3"), {"--retry", "none"});
  StartWorker("json-wait", FastFlags());
  CliResult r = Cli({"wait", std::to_string(bad), "--log-format", "json", "--timeout", "60s"},
                    /*json=*/false);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::vector<Json> lines = JsonLines(r.err);
  ExpectCommonKeys(lines, "");
  ASSERT_EQ(lines.size(), 1u) << r.err;  // job N ended dead
  EXPECT_EQ(lines[0]["level"], "error");
  EXPECT_EQ(lines[0].value("job", int64_t{0}), bad) << r.err;
  EXPECT_EQ(lines[0].value("component", ""), "wait") << r.err;
  EXPECT_NE(r.out.find("job " + std::to_string(bad) + " dead"), std::string::npos) << r.out;

  // A queue that does not drain: the timeout is one error line.
  Add("true", {"--delay", "1h"});
  r = Cli({"wait", "--log-format", "json", "--timeout", "200ms"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  lines = JsonLines(r.err);
  ExpectCommonKeys(lines, "");
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0]["level"], "error");
  EXPECT_NE(lines[0].value("message", "").find("still unfinished after 200ms"), std::string::npos)
      << r.err;
  // A value it does not know: a usage error, before it waits.
  r = Cli({"wait", "--log-format", "yaml"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--log-format must be text or json"), std::string::npos) << r.err;
}

// `warden demo`: its whole story on stderr as JSON lines, the --json
// report alone on stdout.
TEST_P(LogFormatOneBackendTest, DemoLinesAreJson) {
  CliResult r = Cli({"demo", "--jobs", "40", "--log-format", "json"}, /*json=*/true,
                    Millis(180'000));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json.value("ok", false), true) << r.out;
  const std::vector<Json> lines = JsonLines(r.err);
  ExpectCommonKeys(lines, "");
  bool enqueued = false, held = false;
  for (const Json& j : lines) {
    EXPECT_EQ(j.value("component", ""), "demo") << j.dump();
    EXPECT_EQ(j.value("level", ""), "info") << j.dump();
    const std::string message = j.value("message", "");
    enqueued = enqueued || message.find("enqueued 40 command jobs") != std::string::npos;
    held = held || message == "all invariants hold";
  }
  EXPECT_TRUE(enqueued) << r.err;
  EXPECT_TRUE(held) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Backends, LogFormatTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);
INSTANTIATE_TEST_SUITE_P(Sqlite, LogFormatOneBackendTest, ::testing::Values(Backend::kSqlite),
                         BackendName);

}  // namespace
}  // namespace wt
