// Row "invalid options" of docs/bad-input.md: every bad flag value is a
// usage error (exit 2) with one line naming the problem, nothing is
// enqueued and no worker starts; the API says kInvalidArgument.
#include "bad_input.h"

namespace bi {
namespace {

using warden::StatusCode;

class OptionsTest : public BadInputTest {
 protected:
  struct Case {
    std::vector<std::string> args;
    std::string says;  // part of the one-line error
  };
  void ExpectUsageErrors(const std::vector<Case>& cases) {
    for (const Case& c : cases) {
      CliResult r = Warden(db(), c.args);
      std::string joined;
      for (const auto& a : c.args) joined += " " + (a.size() > 40 ? a.substr(0, 40) + "..." : a);
      EXPECT_EQ(r.exit_code, 2) << "warden" << joined << "\n" << r.err;
      EXPECT_TRUE(OneLineError(r, c.says)) << "warden" << joined;
      EXPECT_EQ(r.out, "") << "warden" << joined;
    }
  }
};

const std::string k201(201, 'q');  // one byte over kMaxNameBytes

TEST_P(OptionsTest, BadAddOptionsAreUsageErrors) {
  ExpectUsageErrors({
      {{"add", "t", "--lease", "abc"}, "--lease: invalid duration 'abc'"},
      {{"add", "t", "--lease", "10"}, "--lease: invalid duration '10'"},
      {{"add", "t", "--lease", "500ms"}, "lease must be at least 1s"},
      {{"add", "t", "--lease", "0s"}, "lease must be at least 1s"},
      {{"add", "t", "--timeout", "0s"}, "timeout must be positive"},
      {{"add", "t", "--timeout", "-1s"}, "--timeout: invalid duration '-1s'"},
      {{"add", "t", "--timeout", "5parsecs"}, "--timeout: invalid duration '5parsecs'"},
      {{"add", "t", "--delay", "-3s"}, "--delay: invalid duration '-3s'"},
      {{"add", "t", "--start-deadline", "0s"}, "start deadline must be positive"},
      {{"add", "t", "--priority", "99999999999"}, "--priority"},
      {{"add", "t", "--priority", "abc"}, "--priority"},
      {{"add", "t", "--priority", "1.5"}, "--priority"},
      {{"add", "t", "--max-attempts", "0"}, "--max-attempts"},
      {{"add", "t", "--max-attempts", "-1"}, "--max-attempts"},
      {{"add", "t", "--max-crashes", "0"}, "--max-crashes"},
      {{"add", "t", "--retry", "sometimes"}, "--retry must be none, default or forever"},
      {{"add", "t", "--retry", ""}, "--retry must be none, default or forever"},
      {{"add", "t", "--queue", ""}, "queue must not be empty"},
      {{"add", "t", "--queue", k201}, "queue is longer than 200 bytes"},
      {{"add", k201}, "task is longer than 200 bytes"},
      {{"add", "t", "--unique-key", k201}, "unique key is longer than 200 bytes"},
      {{"add", "t", "--concurrency-key", k201}, "concurrency key is longer than 200 bytes"},
      {{"add", "t", "--no-such-flag"}, "--no-such-flag"},
      {{"add", "t", "{}", "extra"}, "extra"},
      {{"add"}, "give a TASK, or --cmd 'SHELL COMMAND'"},
      {{"add", "--cmd", ""}, "give a TASK, or --cmd 'SHELL COMMAND'"},
      // Names no `warden worker` could serve, or a backend could not store
      // as given: refused up front (they were accepted and waited forever).
      {{"add", "t", "--queue", "a,b"}, "queue must not contain ','"},
      {{"add", "resize=x"}, "task must not contain '='"},
      {{"add", "t", "--unique-key", "k\x01"}, "unique key must not contain NUL or other control"},
      {{"add", "t", "--concurrency-key", "two\nlines"}, "control characters: 'two lines'"},
      {{"add", "caf\xe9"}, "task is not valid UTF-8 (byte 3): 'caf?'"},
      // Characters that do not show: two queues would look like one.
      {{"add", "t", "--queue", "ma\u200Bil"}, "queue must not contain U+200B (a zero-width"},
      {{"add", "\u202Eliam"}, "task must not contain U+202E (a direction embedding or override"},
      {{"add", "t", "--unique-key", "k\u0085"}, "unique key must not contain U+0085 (a C1"},
      {{"add", "--cmd", "echo \xff"}, "command is not valid UTF-8"},
      // A payload where the task goes.
      {{"add", R"({"a": 1})"}, "is a payload, not a task name"},
      {{"add", "-"}, "'-' is a payload, not a task name"},
      {{"add", "--cmd", "cat", "[1]", "{}"}, "'[1]' is a payload, not a task name"},
  });
  auto n = client().CountUnfinished();
  ASSERT_TRUE(n.has_value()) << n.error().ToString();
  EXPECT_EQ(*n, 0) << "nothing was enqueued";
}

TEST_P(OptionsTest, BadWorkerOptionsAreUsageErrorsAndNoWorkerStarts) {
  const std::string w = "worker";
  ExpectUsageErrors({
      {{w, "--allow-cmd", "--lease", "abc"}, "--lease: invalid duration 'abc'"},
      {{w, "--allow-cmd", "--lease", "0s"}, "must be at least three heartbeat intervals"},
      {{w, "--allow-cmd", "--lease", "2s", "--heartbeat", "1s"},
       "must be at least three heartbeat intervals"},
      {{w, "--allow-cmd", "--heartbeat", "0s"}, "must be at least three heartbeat intervals"},
      {{w, "--allow-cmd", "--heartbeat", "1x"}, "--heartbeat: invalid duration '1x'"},
      {{w, "--allow-cmd", "--sweep-interval", "0s"}, "sweep interval must be positive"},
      {{w, "--allow-cmd", "--poll-interval", "soon"}, "--poll-interval: invalid duration"},
      // A worker declared itself dead at every sweep; one busy-polled.
      {{w, "--allow-cmd", "--keepalive-threshold", "0s"},
       "the keepalive threshold (0ms) must be at least three heartbeat intervals (1s)"},
      {{w, "--allow-cmd", "--keepalive-threshold", "2s"}, "at least three heartbeat intervals"},
      {{w, "--allow-cmd", "--poll-interval", "0s"}, "poll interval must be at least 10ms"},
      {{w, "--allow-cmd", "--inventory-command", "cat nodes", "--inventory-interval", "500ms"},
       "the inventory interval must be at least 1s"},
      {{w, "--allow-cmd", "--inventory-interval", "often"},
       "--inventory-interval: invalid duration"},
      {{w, "--allow-cmd", "--concurrency", "0"}, "--concurrency"},
      {{w, "--allow-cmd", "--concurrency", "5000"}, "--concurrency"},
      {{w, "--allow-cmd", "--queues", ""}, "a worker needs at least one queue"},
      {{w, "--task", "resize"}, "--task wants NAME=COMMAND, got 'resize'"},
      {{w, "--task", "=echo"}, "--task wants NAME=COMMAND"},
      {{w, "--task", "resize="}, "--task wants NAME=COMMAND"},
      {{w, "--task", "a\nb"}, "--task wants NAME=COMMAND, got 'a b'"},
      {{w, "--allow-cmd", "--bogus"}, "--bogus"},
      {{w, "--allow-cmd", "--log-format", "yaml"}, "--log-format must be text or json, not 'yaml'"},
      {{w}, "this worker can run nothing"},
      {{w, "--allow-cmd", "--name", "w\u202E1"}, "worker name must not contain U+202E"},
      {{w, "--allow-cmd", "--queues", "ma\u200Bil"}, "queue must not contain U+200B"},
  });
  auto workers = client().ListWorkers();
  ASSERT_TRUE(workers.has_value()) << workers.error().ToString();
  EXPECT_TRUE(workers->empty()) << "no worker registered";
}

TEST_P(OptionsTest, BadGlobalAndAdminOptionsAreUsageErrors) {
  ExpectUsageErrors({
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{"jobs", "--state", "bogus"}, "unknown state 'bogus'"},
      {{"jobs", "--limit", "0"}, "--limit"},
      {{"jobs", "show", "abc"}, "'abc' is not a job id"},
      {{"jobs", "show", "-1"}, ""},
      // Outside text in an error is quoted on one short line.
      {{"jobs", "show", "1\n2"}, "'1 2' is not a job id"},
      {{"jobs", "retry", std::string(5000, '7') + "x"}, "' is not a job id"},
      {{"jobs", "--state", "dead\nor alive"}, "unknown state 'dead or alive'"},
      {{"frob\nnicate"}, "unknown command 'frob nicate'"},
      {{"stats", "--no\nsuch"}, "--no such"},
      {{"wait", "--timeout", "later"}, "--timeout: invalid duration 'later'"},
      {{"stats", "--json=maybe"}, ""},
      {{"serve", "--log-format", "xml"}, "--log-format must be text or json, not 'xml'"},
  });
  // Not a usage error (no such worker), but quoted alike (in a database
  // that exists: a missing one is refused first).
  ASSERT_EQ(Warden(db(), {"init"}).exit_code, 0);
  CliResult r = Warden(db(), {"workers", "release", "no\none"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(OneLineError(r, "no live worker named or numbered 'no one'"));
  // A database URL that can never work is a usage error too.
  for (const auto& [url, says] : std::vector<std::pair<std::string, std::string>>{
           {"sqlite:" + dir() + "/x.db?fast=yes", "unknown database option 'fast=yes'"},
           {"sqlite:", "names no file"},
           {"postgresql://[bad", "invalid PostgreSQL URL"},
           {"postgresql://u@localhost:notaport/db", "port 'notaport' is not a number"},
           {"postgresql://u@localhost/db?nosuchoption=1", "invalid PostgreSQL URL"},
           {"memory:", "database URL 'memory:' names no database"},
       }) {
    r = Warden(url, {"stats"});
    EXPECT_EQ(r.exit_code, 2) << url << ": " << r.err;
    EXPECT_TRUE(OneLineError(r, says)) << url;
  }
  // An in-memory database lives in one process: another (each command is
  // one) never finds it, and a command that only reads says so.
  r = Warden("memory:x", {"stats"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(OneLineError(r, "no in-memory database named 'x' is open in this process"));
}

TEST_P(OptionsTest, BadSpecsAndOptionsThroughTheApiAreInvalidArgument) {
  auto spec = [] {
    warden::JobSpec s;
    s.task = "t";
    return s;
  };
  std::vector<std::pair<std::string, warden::JobSpec>> bad;
  auto add = [&](const std::string& says, auto change) {
    warden::JobSpec s = spec();
    change(s);
    bad.emplace_back(says, s);
  };
  add("task must not be empty", [](auto& s) { s.task = ""; });
  add("queue must not be empty", [](auto& s) { s.queue = ""; });
  add("task is longer than 200 bytes", [](auto& s) { s.task = k201; });
  add("max attempts must be at least 1", [](auto& s) { s.max_attempts = 0; });
  add("max attempts must be at least 1", [](auto& s) { s.max_attempts = -5; });
  add("max crashes must be at least 1", [](auto& s) { s.max_crashes = 0; });
  add("timeout must be positive", [](auto& s) { s.timeout = Millis(0); });
  add("timeout must be positive", [](auto& s) { s.timeout = Millis(-1); });
  add("lease must be at least 1s", [](auto& s) { s.lease = Millis(999); });
  add("delay must not be negative", [](auto& s) { s.delay = Millis(-1); });
  add("start deadline must be positive", [](auto& s) { s.start_deadline = Millis(0); });
  add("queue must not contain ',' (warden worker --queues splits at commas): 'a,b'",
      [](auto& s) { s.queue = "a,b"; });
  add("task must not contain '=' (warden worker --task NAME=COMMAND splits at the first '='): "
      "'a=b'",
      [](auto& s) { s.task = "a=b"; });
  add("concurrency key must not contain NUL or other control characters: 'k?'",
      [](auto& s) { s.concurrency_key = std::string("k\0", 2); });
  for (const auto& [says, s] : bad) {
    auto r = client().Enqueue(s);
    ASSERT_FALSE(r.has_value()) << says;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << says;
    EXPECT_EQ(r.error().message(), says);
  }
  warden::JobFilter f;
  f.limit = 0;
  EXPECT_EQ(client().ListJobs(f).error().code(), StatusCode::kInvalidArgument);

  std::vector<std::pair<std::string, warden::WorkerOptions>> bad_workers;
  auto add_worker = [&](const std::string& says, auto change) {
    warden::WorkerOptions o;
    change(o);
    bad_workers.emplace_back(says, o);
  };
  add_worker("concurrency must be at least 1", [](auto& o) { o.concurrency = 0; });
  add_worker("a worker needs at least one queue", [](auto& o) { o.queues.clear(); });
  add_worker("must be at least three heartbeat intervals", [](auto& o) { o.lease = Millis(0); });
  add_worker("must be at least three heartbeat intervals",
             [](auto& o) { o.heartbeat = Millis(-1); });
  add_worker("sweep interval must be positive", [](auto& o) { o.sweep_interval = Millis(0); });
  add_worker("worker name must not contain U+202E", [](auto& o) { o.name = "w\u202E1"; });
  add_worker("queue must not contain U+200B", [](auto& o) { o.queues = {"ma\u200Bil"}; });
  for (const auto& [says, o] : bad_workers) {
    auto w = warden::Worker::Create(db(), o);
    ASSERT_FALSE(w.has_value()) << says;
    EXPECT_EQ(w.error().code(), StatusCode::kInvalidArgument) << says;
    EXPECT_NE(w.error().message().find(says), std::string::npos) << w.error().ToString();
  }
  auto n = client().CountUnfinished();
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, OptionsTest, ::testing::ValuesIn(wt::AllBackends()),
                         wt::BackendName);

}  // namespace
}  // namespace bi
