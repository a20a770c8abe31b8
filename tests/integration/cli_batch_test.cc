// `warden add --batch`: jobs on stdin, one JSON object a line, enqueued all
// or none (docs/cli.md). Real `warden` processes on each backend; the
// parser alone is tests/core/job_json_test.cc.
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "harness.h"
#include "store/postgres/pg_conn.h"

namespace wt {
namespace {

using warden::JobState;

class CliBatchTest : public IntegrationTest {
 protected:
  // `warden --db DB [--json] add --batch ARGS... < input`.
  CliResult Batch(const std::string& input, const std::vector<std::string>& args = {},
                  bool json = true) {
    const std::string base = dir() + "/batch-" + std::to_string(++runs_);
    std::ofstream(base + ".ndjson", std::ios::binary) << input;
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" < \"$0\"", base + ".ndjson",
                                     WARDEN_BIN, "--db", db()};
    if (json) argv.push_back("--json");
    argv.insert(argv.end(), {"add", "--batch"});
    argv.insert(argv.end(), args.begin(), args.end());
    return RunToExit(argv, base, Millis(120'000));
  }
  int64_t Unfinished() {
    auto n = client().CountUnfinished();
    EXPECT_TRUE(n.has_value()) << n.error().ToString();
    return n.has_value() ? *n : -1;
  }

 private:
  int runs_ = 0;
};

std::vector<int64_t> Ids(const std::string& out) {
  std::vector<int64_t> ids;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) ids.push_back(std::stoll(line));
  return ids;
}

// "{"task": "t", "payload": {"n": 0}}\n" ... for 0 to n-1; `bad` replaces
// line `bad_line` (from 1).
std::string Lines(int n, int bad_line = 0, const std::string& bad = "") {
  std::string text;
  for (int i = 0; i < n; ++i) {
    text +=
        i + 1 == bad_line ? bad : R"({"task": "t", "payload": {"n": )" + std::to_string(i) + "}}";
    text += "\n";
  }
  return text;
}

// More jobs than one transaction holds (kMaxBatchJobs, 10,000): every one
// stored, in order, the ids on stdout a line each.
TEST_P(CliBatchTest, ManyJobsAreStoredInTheirOrder) {
  constexpr int kJobs = 25'001;
  CliResult r = Batch(Lines(kJobs), {}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<int64_t> ids = Ids(r.out);
  ASSERT_EQ(ids.size(), static_cast<size_t>(kJobs));
  for (size_t i = 1; i < ids.size(); ++i) ASSERT_LT(ids[i - 1], ids[i]) << "in input order";
  EXPECT_EQ(Unfinished(), kJobs);
  for (const size_t i : {size_t{0}, size_t{9'999}, size_t{10'000}, size_t{kJobs - 1}}) {
    auto job = GetJob(ids[i]);
    ASSERT_TRUE(job.has_value());
    EXPECT_EQ(job->task, "t");
    EXPECT_EQ(job->payload, Json({{"n", i}})) << "line " << i + 1;
  }
  // Said once for the lot, not once a job.
  EXPECT_EQ(r.err,
            "warden: note: no active worker runs task t on queue default yet: 25001 new jobs "
            "wait until one does (start one with: warden worker --task t=COMMAND)\n");
}

// The whole input is checked before anything is stored, past the first
// transaction's worth too.
TEST_P(CliBatchTest, ABadLineAnywhereStoresNothingAndIsNamed) {
  CliResult r = Batch(Lines(6, 4, R"({"task": "t", "priority": "high"})"), {}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "warden: line 4: priority: must be an integer, not \"high\"\n");
  EXPECT_EQ(r.out, "");
  r = Batch(Lines(12'000, 11'000, R"({"task": "t", "delay": "soon"})"), {}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("warden: line 11000: delay: invalid duration 'soon'", 0), 0u) << r.err;
  EXPECT_EQ(r.out, "");
  // --json: the error document alone.
  r = Batch(Lines(3, 2, R"({"task": "t", "queu": "q"})"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.json["error"]["code"], "invalid_argument") << r.out;
  EXPECT_EQ(r.json["error"]["message"], "line 2: unknown field \"queu\"; did you mean \"queue\"?");
  EXPECT_EQ(Unfinished(), 0);
}

TEST_P(CliBatchTest, MalformedJsonAndLinesThatAreNotObjectsAreUsageErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"task\": \"t\"}\n{bad\n", "warden: line 2: the job is not valid JSON: {bad\n"},
      {"[{\"task\": \"t\"}]\n",
       "warden: line 1: a job is a JSON object ({\"task\": ...}), not an array\n"},
      {"\n\n\"t\"\n", "warden: line 3: a job is a JSON object ({\"task\": ...}), not a string\n"},
      {"{\"task\": \"t\"} {\"task\": \"u\"}\n",
       "warden: line 1: the job is not valid JSON: {\"task\": \"t\"} {\"task\": \"u\"}\n"},
      {"{\"payload\": {}}\n", "warden: line 1: give \"task\", or \"cmd\" (a shell command)\n"},
      {"{\"task\": \"t\", \"queue\": \"a,b\"}\n",
       "warden: line 1: queue must not contain ',' (warden worker --queues splits at commas): "
       "'a,b'\n"},
  };
  for (const auto& [input, says] : cases) {
    CliResult r = Batch(input, {}, /*json=*/false);
    EXPECT_EQ(r.exit_code, 2) << input;
    EXPECT_EQ(r.err, says) << input;
    EXPECT_EQ(r.out, "") << input;
  }
  EXPECT_EQ(Unfinished(), 0);
}

// As `warden add --unique-key`: the live job's id, created false, and a
// note on stderr; a key repeated within the batch is one job too.
TEST_P(CliBatchTest, UniqueKeyDuplicatesGetTheLiveJobsId) {
  CliResult first = Cli({"add", "t", "--unique-key", "k"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const int64_t existing = first.json["id"].get<int64_t>();
  const std::string input = R"({"task": "t", "unique_key": "k"}
{"task": "t", "unique_key": "n"}
{"task": "t", "unique_key": "n"}
{"task": "t"}
)";
  CliResult r = Batch(input, {}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<int64_t> ids = Ids(r.out);
  ASSERT_EQ(ids.size(), 4u) << r.out;
  EXPECT_EQ(ids[0], existing);
  EXPECT_EQ(ids[2], ids[1]);
  EXPECT_NE(ids[3], ids[1]);
  EXPECT_NE(r.err.find("warden: line 1: job " + std::to_string(existing) +
                       " already exists with that unique key; nothing was added\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("warden: line 3: job " + std::to_string(ids[1]) +
                       " already exists with that unique key; nothing was added\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Unfinished(), 3);

  r = Batch(input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(r.json.is_array()) << r.out;
  ASSERT_EQ(r.json.size(), 4u);
  EXPECT_EQ(r.json[0], Json({{"id", existing}, {"created", false}, {"served", false}}));
  EXPECT_EQ(r.json[1]["id"], ids[1]);
  EXPECT_EQ(r.json[1]["created"], false) << "stored by the batch before";
  EXPECT_EQ(r.json[3]["created"], true);
  EXPECT_EQ(Unfinished(), 4);
}

TEST_P(CliBatchTest, FlagsAreTheDefaultsOfWhatALineLeavesOut) {
  const std::string input = R"({"payload": {"n": 1}}
{"task": "sms", "queue": "other", "priority": null, "max_attempts": 9}
{"cmd": "echo hi", "timeout": "2m"}
)";
  CliResult r = Batch(input, {"email", "--queue", "mail", "--priority", "5", "--max-attempts",
                              "2", "--timeout", "1m", "--at-most-once"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.json.size(), 3u) << r.out;
  Json a = Show(r.json[0]["id"].get<int64_t>());
  EXPECT_EQ(a["task"], "email");
  EXPECT_EQ(a["queue"], "mail");
  EXPECT_EQ(a["priority"], 5);
  EXPECT_EQ(a["max_attempts"], 2);
  EXPECT_EQ(a["timeout_ms"], 60'000);
  EXPECT_EQ(a["delivery"], "at_most_once");
  EXPECT_EQ(a["payload"], Json({{"n", 1}}));
  Json b = Show(r.json[1]["id"].get<int64_t>());
  EXPECT_EQ(b["task"], "sms");
  EXPECT_EQ(b["queue"], "other");
  EXPECT_EQ(b["priority"], 5) << "null: the default";
  EXPECT_EQ(b["max_attempts"], 9);
  Json c = Show(r.json[2]["id"].get<int64_t>());
  EXPECT_EQ(c["task"], "email") << "the default task, with its own command";
  EXPECT_EQ(c["command"], "echo hi");
  EXPECT_EQ(c["timeout_ms"], 120'000);

  // A default command: each line is a payload for it.
  r = Batch("{\"payload\": [1]}\n{\"payload\": [2]}\n", {"--cmd", "cat", "--delay", "1h"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.json.size(), 2u) << r.out;
  Json d = Show(r.json[1]["id"].get<int64_t>());
  EXPECT_EQ(d["task"], "command");
  EXPECT_EQ(d["command"], "cat");
  EXPECT_EQ(d["payload"], Json::array({2}));
  EXPECT_EQ(d["state"], "scheduled");

  // Flags that make no sense with --batch are usage errors.
  r = Batch("{\"task\": \"t\"}\n", {"t", "{}"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("warden: --batch reads its jobs from stdin, one JSON object a line", 0),
            0u)
      << r.err;
  r = Batch("{\"task\": \"t\"}\n", {"--wait"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--wait excludes --batch"), std::string::npos) << r.err;
  r = Batch("{\"task\": \"t\"}\n", {"--delay", "soon"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("warden: --delay: invalid duration 'soon'", 0), 0u) << r.err;
  EXPECT_EQ(Unfinished(), 5);
}

TEST_P(CliBatchTest, EmptyInputAddsNothing) {
  for (const std::string input : {"", "\n", "  \n\t\n"}) {
    CliResult r = Batch(input, {}, /*json=*/false);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
    r = Batch(input);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.json, Json::array()) << r.out;
  }
  EXPECT_EQ(Unfinished(), 0);
}

// --json: one array, a job an element, as `add --json` prints one job.
TEST_P(CliBatchTest, JsonIsOneArrayWithServed) {
  StartWorker("w", FastFlags({{"--queues", "busy"}}));
  CliResult r = Batch(R"({"cmd": "true", "queue": "busy"}
{"task": "nobody", "queue": "busy"}
)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(r.json.is_array()) << r.out;
  ASSERT_EQ(r.json.size(), 2u);
  EXPECT_EQ(r.json[0]["served"], true) << "the worker runs command jobs on queue busy";
  EXPECT_EQ(r.json[1]["served"], false) << "no worker has task nobody";
  EXPECT_EQ(r.json[0]["created"], true);
  EXPECT_TRUE(WaitFor([&] { return JobInState(r.json[0]["id"].get<int64_t>(),
                                               JobState::kSucceeded); }));
}

// --require-worker: every kind of job in the batch (queue, task, command or
// not) must have an active worker, or nothing is stored; the first line of
// a kind that has none is named.
TEST_P(CliBatchTest, RequireWorkerStoresNothingWhenAKindHasNoWorker) {
  const std::string input = R"({"cmd": "true", "queue": "busy"}
{"task": "nobody", "queue": "busy"}
{"task": "nobody", "queue": "busy"}
{"task": "other", "queue": "busy"}
)";
  CliResult r = Batch(input, {"--require-worker"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.json["error"]["code"], "failed_precondition") << r.out;
  EXPECT_NE(r.err.find("warden: line 1: no active worker runs command jobs on queue busy ("
                       "start one with: warden worker --queues busy --allow-cmd); nothing was "
                       "added (1 job like it, and 2 other kinds of job no worker runs)\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Unfinished(), 0);

  StartWorker("w", FastFlags({{"--queues", "busy"}}));
  r = Batch(input, {"--require-worker"}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("warden: line 2: no active worker runs task nobody on queue busy ("
                       "start one with: warden worker --queues busy --task nobody=COMMAND); "
                       "nothing was added (2 jobs like it, and 1 other kind of job no worker "
                       "runs)\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Unfinished(), 0);

  // Every kind served: stored and run, and no note.
  r = Batch(R"({"cmd": "true", "queue": "busy"}
{"cmd": "exit 0", "queue": "busy"}
)", {"--require-worker"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.json.size(), 2u) << r.out;
  EXPECT_EQ(r.err, "");
  for (const Json& job : r.json) {
    EXPECT_TRUE(
        WaitFor([&] { return JobInState(job["id"].get<int64_t>(), JobState::kSucceeded); }));
  }
}

// A long input is stored a transaction of 10,000 at a time: when a later
// one fails, what the earlier ones stored stays, and is said. A trigger
// refuses jobs of task no-room, which only the second transaction holds.
TEST_P(CliBatchTest, ALaterTransactionThatFailsSaysWhatWasStored) {
  ASSERT_EQ(Cli({"init"}).exit_code, 0);
  if (postgres()) {
    auto conn = warden::pg::Conn::Connect(db());
    ASSERT_TRUE(conn.has_value()) << conn.error().ToString();
    const warden::Status s = (*conn)->ExecScript(R"(
        CREATE FUNCTION public.no_room() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.task = 'no-room' THEN RAISE EXCEPTION 'no room for this job'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER no_room AFTER INSERT ON warden.jobs
          FOR EACH ROW EXECUTE FUNCTION public.no_room();)");
    ASSERT_TRUE(s.ok()) << s.ToString();
  } else {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(raw,
                           "CREATE TRIGGER no_room AFTER INSERT ON jobs WHEN NEW.task = 'no-room' "
                           "BEGIN SELECT RAISE(ABORT, 'no room for this job'); END",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(raw);
    sqlite3_close(raw);
  }
  const std::string input = Lines(12'000, 11'000, R"({"task": "no-room"})");
  CliResult r = Batch(input, {}, /*json=*/false);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(Ids(r.out).size(), 10'000u) << "the ids of what was stored";
  const std::string says =
      "warden: stored 10000 of 12000 jobs (lines 1 to 10000; their ids are on stdout), not the "
      "rest: ";
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no room for this job"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.back(), '\n');
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(Unfinished(), 10'000);

  // --json: the error document, with the rows of what was stored.
  r = Batch(input);
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_TRUE(r.json.is_object()) << r.out.substr(0, 500);
  EXPECT_EQ(r.json["error"]["message"].get<std::string>().rfind(
                "stored 10000 of 12000 jobs (lines 1 to 10000), not the rest: ", 0),
            0u)
      << r.json["error"];
  ASSERT_TRUE(r.json["jobs"].is_array());
  EXPECT_EQ(r.json["jobs"].size(), 10'000u);
  EXPECT_EQ(r.json["jobs"][0]["created"], true);
  EXPECT_EQ(Unfinished(), 20'000);
}

INSTANTIATE_TEST_SUITE_P(Backends, CliBatchTest, ::testing::ValuesIn(AllBackends()), BackendName);

}  // namespace
}  // namespace wt
