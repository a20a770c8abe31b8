// `--json` is a contract for scripts: every command prints exactly one JSON
// document on stdout on every outcome, with a fixed set of keys. A failure
// is {"error": {"code", "message"}} (and still exit 2 or 1 and one
// `warden: ...` line on stderr), usage errors CLI11 finds before any command
// runs included, wherever --json stands on the line.
#include <set>

#include "harness.h"

namespace wt {
namespace {

using warden::JobState;

std::set<std::string> Keys(const Json& object) {
  std::set<std::string> keys;
  if (object.is_object()) {
    for (const auto& [k, v] : object.items()) keys.insert(k);
  }
  return keys;
}

// Exactly {"error": {"code": code, "message": <one line>}}, exit status
// `exit_code`, and one `warden: ` line on stderr.
::testing::AssertionResult IsErrorDocument(const CliResult& r, int exit_code,
                                           const std::string& code) {
  auto fail = [&] {
    return ::testing::AssertionFailure()
           << "exit " << r.exit_code << ", stdout [" << r.out << "], stderr [" << r.err << "]: ";
  };
  if (r.exit_code != exit_code) return fail() << "want exit " << exit_code;
  if (Keys(r.json) != std::set<std::string>{"error"}) return fail() << "not an error document";
  const Json& e = r.json["error"];
  if (Keys(e) != std::set<std::string>{"code", "message"}) return fail() << "error keys";
  if (e["code"] != code) return fail() << "want code " << code;
  if (!e["message"].is_string() || e["message"].get<std::string>().empty() ||
      e["message"].get<std::string>().find('\n') != std::string::npos) {
    return fail() << "message is not one line";
  }
  const size_t nl = r.err.find('\n');
  if (r.err.rfind("warden: ", 0) != 0 || nl + 1 != r.err.size()) {
    return fail() << "stderr is not one 'warden: ' line";
  }
  return ::testing::AssertionSuccess();
}

class CliJsonTest : public IntegrationTest {
 protected:
  // `warden --db DB ARGS...`: --json only where `args` puts it.
  CliResult Run(const std::string& db, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {WARDEN_BIN, "--db", db};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunToExit(argv, dir() + "/run-" + std::to_string(++runs_), Millis(60'000));
  }

 private:
  int runs_ = 0;
};

TEST_P(CliJsonTest, StatsHasEveryStateEvenAtZero) {
  ASSERT_EQ(Cli({"init"}).exit_code, 0);
  const std::set<std::string> job_states = {"scheduled", "available", "running",
                                            "succeeded", "retryable", "dead",
                                            "cancelled", "expired"};
  const std::set<std::string> worker_states = {"active", "draining", "stopped", "dead"};
  Json s = Stats();
  EXPECT_EQ(Keys(s), (std::set<std::string>{"jobs", "workers", "recovery", "unserved"}));
  EXPECT_EQ(s["unserved"], Json::array()) << s.dump();
  EXPECT_EQ(Keys(s["jobs"]), job_states) << s.dump();
  EXPECT_EQ(Keys(s["workers"]), worker_states) << s.dump();
  for (const auto& [state, n] : s["jobs"].items()) EXPECT_EQ(n, 0) << state;
  ASSERT_GT(Add("true", {"--delay", "1h"}), 0);
  s = Stats();
  EXPECT_EQ(Keys(s["jobs"]), job_states) << "the keys do not change with the counts";
  EXPECT_EQ(s["jobs"]["scheduled"], 1);
  EXPECT_EQ(s["jobs"]["available"], 0);
}

TEST_P(CliJsonTest, FailuresPrintAnErrorDocument) {
  ASSERT_GT(Add("true"), 0);  // nothing runs it
  // wait: one document whether the queue drained or not.
  EXPECT_TRUE(IsErrorDocument(Cli({"wait", "--timeout", "200ms"}), 1, "deadline_exceeded"));
  EXPECT_TRUE(IsErrorDocument(Cli({"jobs", "show", "12345"}), 1, "not_found"));
  EXPECT_TRUE(IsErrorDocument(Cli({"jobs", "retry", "12345"}), 1, "not_found"));
  const std::string typo = dir() + "/typo.db";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--json", "stats"}, {"jobs", "--json"}, {"wait", "--json"}, {"workers", "--json"}}) {
    EXPECT_TRUE(IsErrorDocument(Run(typo, args), 1, "not_found")) << args[0];
  }
  // Usage errors, those CLI11 finds before any command runs included, with
  // --json before, after or among the command's own arguments.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--json", "add", "t", "{bad"},
           {"add", "t", "--json", "--no-such-flag"},
           {"add", "--json", "t", "--max-attempts", "0"},
           {"frobnicate", "--json"},
           {"--json", "frobnicate"},
           {"jobs", "show", "abc", "--json"},
           {"jobs", "--state", "bogus", "--json"},
           {"jobs", "--limit", "0", "--json"},
           {"--json", "wait", "--timeout", "later"},
           {"--json"}}) {
    std::string joined;
    for (const auto& a : args) joined += " " + a;
    EXPECT_TRUE(IsErrorDocument(Run(db(), args), 2, "invalid_argument")) << "warden" << joined;
  }
  // Without --json, stdout stays empty.
  CliResult r = Run(db(), {"jobs", "show", "12345"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  r = Run(db(), {"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
}

TEST_P(CliJsonTest, WaitPrintsADocumentWhenTheQueueDrains) {
  StartWorker("a");
  ASSERT_GT(Add("true"), 0);
  CliResult r = Cli({"wait", "--timeout", "20s"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json, Json({{"unfinished", 0}})) << r.out;
}

// `jobs show --json`: the start deadline and the job's own lease are there;
// an attempt's `start_marked_at` is the at-most-once start mark, named for
// what it is (it was `started_at`, null for every at-least-once attempt).
TEST_P(CliJsonTest, JobsShowHasEveryFieldAndNamesTheStartMark) {
  StartWorker("a");
  const int64_t plain = Add(Job("log ran"));
  const int64_t leased = Add(Job("log ran"), {"--lease", "5s", "--start-deadline", "1h"});
  const int64_t once = Add(Job("log ran"), {"--at-most-once"});
  for (const int64_t id : {plain, leased, once}) {
    ASSERT_GT(id, 0);
    ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); })) << id;
  }
  const std::set<std::string> job_keys = {
      "id",         "queue",           "task",          "command",
      "payload",    "priority",        "state",         "attempt",
      "charged_attempts", "max_attempts", "crashes",    "max_crashes",
      "retry",      "delivery",        "timeout_ms",    "lease_ms",
      "unique_key", "concurrency_key", "worker",        "worker_name",
      "lease_token", "lease_expires_at", "run_at",      "start_deadline_at",
      "created_at", "started_at",      "finished_at",   "last_error",
      "last_error_message", "avoid_node", "checkpoint", "result", "attempts"};
  const std::set<std::string> attempt_keys = {"attempt",    "worker",          "worker_name",
                                              "lease_token", "claimed_at",     "start_marked_at",
                                              "finished_at", "outcome",        "note",
                                              "lost_by",     "runnable_at",    "error"};
  for (const int64_t id : {plain, leased, once}) {
    const Json job = Show(id);
    EXPECT_EQ(Keys(job), job_keys) << job.dump(2);
    ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
    EXPECT_EQ(Keys(job["attempts"][0]), attempt_keys) << job.dump(2);
    EXPECT_TRUE(job["attempts"][0]["claimed_at"].is_string());
  }
  const Json p = Show(plain), l = Show(leased), o = Show(once);
  EXPECT_EQ(p["lease_ms"], 1000) << "the lease it ran under: its worker's (FastFlags)";
  EXPECT_TRUE(p["start_deadline_at"].is_null());
  const int64_t later = Add("true", {"--delay", "1h"});
  EXPECT_TRUE(Show(later)["lease_ms"].is_null()) << "no lease of its own, not claimed yet";
  EXPECT_EQ(l["lease_ms"], 5000);
  ASSERT_TRUE(l["start_deadline_at"].is_string()) << l.dump(2);
  EXPECT_GT(l["start_deadline_at"].get<std::string>(), l["created_at"].get<std::string>());
  EXPECT_TRUE(p["attempts"][0]["start_marked_at"].is_null()) << "at-least-once: no mark";
  EXPECT_TRUE(o["attempts"][0]["start_marked_at"].is_string()) << o.dump(2);
}

INSTANTIATE_TEST_SUITE_P(Backends, CliJsonTest, ::testing::ValuesIn(AllBackends()), BackendName);

}  // namespace
}  // namespace wt
