// Bad input to the `warden` command: usage errors exit 2, other failures
// exit 1, always with one line on stderr; a file that is not a warden
// database is refused and left untouched; a database that cannot be reached
// is exit 1 too.
#include <sqlite3.h>

#include <fstream>
#include <set>
#include <sstream>

#include "warden/text.h"
#include "harness.h"
#include "store/postgres/pg_conn.h"

namespace wt {
namespace {

class CliTest : public IntegrationTest {
 protected:
  // `warden ARGS...` with an explicit --db (no --json unless in args).
  CliResult RunWithDb(const std::string& db, std::vector<std::string> args) {
    args.insert(args.begin(), {"--db", db});
    return RunRaw(args);
  }
  CliResult RunRaw(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {WARDEN_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    auto child = Child::Spawn(argv, dir() + "/raw.out", dir() + "/raw.err");
    CliResult r;
    EXPECT_TRUE(child->WaitExit(kDeadline));
    r.exit_code = child->ExitCode();
    r.out = child->Stdout();
    r.err = child->Stderr();
    return r;
  }
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One line, starting with "warden: ".
::testing::AssertionResult OneLineError(const CliResult& r) {
  const size_t nl = r.err.find('\n');
  if (r.err.rfind("warden: ", 0) != 0 || nl == std::string::npos || nl + 1 != r.err.size()) {
    return ::testing::AssertionFailure() << "stderr is not one 'warden: ' line: [" << r.err << "]";
  }
  return ::testing::AssertionSuccess();
}

TEST_P(CliTest, UsageErrorsExitTwoWithOneLine) {
  const std::vector<std::vector<std::string>> cases = {
      {"add", "resize", "{not json"},                     // malformed payload
      {"add", "resize", "[1, 2"},                         //
      {"add", "--cmd", "true", "--no-such-flag"},         // unknown flag
      {"add", "--cmd", "true", "--timeout", "5parsecs"},  // bad durations
      {"add", "--cmd", "true", "--timeout", "soon"},      //
      {"add", "--cmd", "true", "--lease", "10"},          // no unit
      {"add", "--cmd", "true", "--delay", "-3s"},         //
      {"add", "--cmd", "true", "--max-attempts", "0"},    // out of range
      {"add", "--cmd", "true", "--retry", "sometimes"},   //
      {"add"},                                            // nothing to run
      {"worker", "--allow-cmd", "--heartbeat", "1x"},     //
      {"worker", "--allow-cmd", "--lease", "100ms", "--heartbeat", "1s"},
      {"wait", "--timeout", "later"},  //
      {"jobs", "show", "abc"},         // not an id
      {"frobnicate"},                  // unknown command
  };
  for (const auto& args : cases) {
    CliResult r = RunWithDb(db(), args);
    std::string joined;
    for (const auto& a : args) joined += " " + a;
    EXPECT_EQ(r.exit_code, 2) << "warden" << joined << "\n" << r.err;
    EXPECT_TRUE(OneLineError(r)) << "warden" << joined;
    EXPECT_EQ(r.out, "") << "warden" << joined;
  }
  // None of them enqueued anything.
  auto n = client().CountUnfinished();
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, 0);
}

// About a database that is a file: a path whose directory is missing, a
// file that is something else. A PostgreSQL database is named by a URL and
// lives on a server (its counterpart: PostgresCliTest below).
class SqliteFileCliTest : public CliTest {};

TEST_P(SqliteFileCliTest, MissingDirectoryInDbPathExitsOne) {
  const std::string db = dir() + "/no/such/dir/jobs.db";
  CliResult r = RunWithDb(db, {"add", "--cmd", "true"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(OneLineError(r));
  EXPECT_NE(r.err.find(db), std::string::npos) << "names the path: " << r.err;
  EXPECT_NE(r.err.find("directory '" + dir() + "/no/such/dir' does not exist"), std::string::npos)
      << r.err;
  r = RunWithDb(db, {"worker", "--allow-cmd"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(OneLineError(r));
}

// A mistyped path must not pass for an empty queue (`warden wait` in CI):
// only init, add and worker create a database.
TEST_P(SqliteFileCliTest, CommandsThatDoNotAddRefuseAMissingDatabaseAndCreateNone) {
  const std::string db = dir() + "/typo.db";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"wait"},
           {"wait", "--timeout", "1s"},
           {"stats"},
           {"--json", "stats"},
           {"jobs"},
           {"jobs", "show", "1"},
           {"jobs", "retry", "1"},
           {"jobs", "cancel", "1"},
           {"workers"},
           {"workers", "release", "w"},
           {"sweep"}}) {
    CliResult r = RunWithDb(db, args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
    EXPECT_TRUE(OneLineError(r)) << args[0];
    EXPECT_NE(r.err.find("no database at '" + db + "'"), std::string::npos) << r.err;
    EXPECT_FALSE(std::ifstream(db).good()) << args[0] << " created " << db;
  }
  CliResult r = RunWithDb(db, {"init"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunWithDb(db, {"wait"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_P(SqliteFileCliTest, FileThatIsNotADatabaseIsRefusedAndUntouched) {
  const std::string path = dir() + "/notes.txt";
  std::string content = "These are my notes, not a database.\n";
  for (int i = 0; i < 200; ++i) content += "line " + std::to_string(i) + ": lorem ipsum\n";
  std::ofstream(path, std::ios::binary) << content;

  for (const auto& args : std::vector<std::vector<std::string>>{
           {"add", "--cmd", "true"}, {"stats"}, {"init"}, {"worker", "--allow-cmd"}}) {
    CliResult r = RunWithDb(path, args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
    EXPECT_TRUE(OneLineError(r)) << args[0];
    EXPECT_NE(r.err.find("not a warden database"), std::string::npos) << r.err;
  }
  EXPECT_EQ(ReadAll(path), content) << "the file was modified";
}

TEST_P(CliTest, NewerSchemaIsRefused) {
  ASSERT_EQ(Cli({"init"}).exit_code, 0);
  // Each backend keeps its schema version in its own table.
  if (postgres()) {
    auto conn = warden::pg::Conn::Connect(db());
    ASSERT_TRUE(conn.has_value()) << conn.error().ToString();
    const warden::Status s =
        (*conn)->ExecScript("INSERT INTO warden.schema_version (version) VALUES (999)");
    ASSERT_TRUE(s.ok()) << s.ToString();
  } else {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(
        sqlite3_exec(raw, "INSERT INTO warden_schema VALUES (999)", nullptr, nullptr, nullptr),
        SQLITE_OK);
    sqlite3_close(raw);
  }
  CliResult r = RunWithDb(db(), {"stats"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(OneLineError(r));
  EXPECT_NE(r.err.find("upgrade warden"), std::string::npos) << r.err;
}

TEST_P(CliTest, NotFoundExitsOne) {
  CliResult r = Cli({"jobs", "show", "12345"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(OneLineError(r));
  r = Cli({"workers", "release", "nobody"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(OneLineError(r));
}

TEST_P(CliTest, AddPrintsIdAndCreated) {
  CliResult r = Cli({"add", "--cmd", "true", "--unique-key", "u1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(r.json.is_object()) << r.out;
  EXPECT_TRUE(r.json["created"].get<bool>());
  const int64_t id = r.json["id"].get<int64_t>();
  r = Cli({"add", "--cmd", "true", "--unique-key", "u1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json["id"], id);
  EXPECT_FALSE(r.json["created"].get<bool>());
  r = Cli({"wait", "--timeout", "100ms"});
  EXPECT_EQ(r.exit_code, 1) << "nothing runs the job";
  EXPECT_TRUE(OneLineError(r));
  // Without --json stdout is the id alone (`id=$(warden add ...)`), the
  // note that nothing was added on stderr.
  r = Cli({"add", "--cmd", "true", "--unique-key", "u1"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::to_string(id) + "\n");
  EXPECT_TRUE(OneLineError(r));
  EXPECT_NE(r.err.find("already exists with that unique key"), std::string::npos) << r.err;
  r = Cli({"add", "--cmd", "true", "--unique-key", "u2"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.find_first_not_of("0123456789"), r.out.size() - 1) << r.out;
  EXPECT_NE(r.out, std::to_string(id) + "\n");
  // No worker runs it: said on stderr, one line.
  EXPECT_TRUE(OneLineError(r));
  EXPECT_EQ(r.err.rfind("warden: note: no active worker runs job ", 0), 0u) << r.err;
}

// --require-worker refuses what would wait for a worker nobody runs, and
// adds nothing; once one runs the job's queue and task, it adds as usual.
TEST_P(CliTest, RequireWorkerRefusesAJobNoWorkerRuns) {
  CliResult r = Cli({"add", "report", "--queue", "mail", "--require-worker"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(OneLineError(r));
  EXPECT_EQ(r.err,
            "warden: no active worker runs task report on queue mail (start one with: warden "
            "worker --queues mail --task report=COMMAND); nothing was added\n");
  EXPECT_EQ(r.json["error"]["code"], "failed_precondition") << r.out;
  auto unfinished = client().CountUnfinished();
  ASSERT_TRUE(unfinished.has_value());
  EXPECT_EQ(*unfinished, 0);

  StartWorker("w", FastFlags({{"--queues", "mail"}, {"--task", "report=true"}}));
  r = Cli({"add", "report", "--queue", "mail", "--require-worker"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json["served"], true) << r.out;
  EXPECT_EQ(r.err, "");
  const int64_t id = r.json["id"].get<int64_t>();
  EXPECT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kSucceeded); }));
}

// The whole kept stderr tail (the last 4 KiB), not its first 400 bytes: a
// Python traceback ends with the exception.
TEST_P(CliTest, JobsShowPrintsTheWholeStderrTail) {
  StartWorker("a");
  const int64_t id = Add(Job("for i in $(seq 1 40); do echo \"  File \\\"app.py\\\", line $i, in "
                             "frame_$i\" >&2; done; echo 'ValueError: the last line' >&2; exit 1"),
                         {"--max-attempts", "1"});
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kDead); }));
  CliResult r = Cli({"jobs", "show", std::to_string(id)}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("line 1, in frame_1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("line 40, in frame_40\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ValueError: the last line\n"), std::string::npos) << r.out;
}

// Issue 35 section 6, with a real worker: one attempt count everywhere
// (charged of max, then the runs: it was "4/2" in `warden jobs`), a retry
// --fresh that starts the job over without its checkpoint, and a timeline
// that shows each move to dead with why and who retried it, by which
// operation.
TEST_P(CliTest, RetriesShowOneAttemptCountAFreshStartAndWhoDidIt) {
  auto Has = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  };
  StartWorker("a");
  const int64_t id = Add(Job("log start \"cp=$WARDEN_CHECKPOINT\"; "
                             "if [ \"$WARDEN_ATTEMPT\" = 1 ]; then echo 'checkpoint {\"i\":3}' "
                             ">&3; fi; exit 1"),
                         {"--max-attempts", "2"});
  ASSERT_GT(id, 0);
  const std::string n = std::to_string(id);
  auto dead_after = [&](int runs) {
    return WaitFor([&] {
      auto j = GetJob(id);
      return j && j->state == warden::JobState::kDead && j->attempt == runs;
    });
  };
  ASSERT_TRUE(dead_after(2));
  ASSERT_EQ(GetJob(id)->checkpoint, (Json{{"i", 3}}));

  CliResult retried = Cli({"jobs", "retry", n, "--fresh"}, false);
  ASSERT_EQ(retried.exit_code, 0) << retried.err;
  EXPECT_EQ(retried.out, "job " + n + " is available again, without its checkpoint\n");
  ASSERT_TRUE(dead_after(4));
  const auto starts = LedgerFor(id, "start");
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(starts[1].args.at(0), "cp={\"i\":3}") << "a retry's backoff keeps it";
  EXPECT_EQ(starts[2].args.at(0), "cp=") << "--fresh: started over";

  // The bulk form, by filter: the timeline names the operation.
  CliResult bulk = Cli({"jobs", "retry", "--state", "dead"});
  ASSERT_EQ(bulk.exit_code, 0) << bulk.err;
  const int64_t op = bulk.json.value("id", int64_t{-1});
  EXPECT_EQ(bulk.json.value("fresh", true), false) << bulk.out;
  ASSERT_TRUE(dead_after(6));

  CliResult table = Cli({"jobs"}, false);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_TRUE(Has(table.out, "  2/2 (6 runs)  ")) << table.out;
  CliResult show = Cli({"jobs", "show", n}, false);
  EXPECT_TRUE(Has(show.out, "attempts 2/2 (6 runs), crashes 0 of ")) << show.out;
  CliResult why = Cli({"jobs", "why", n}, false);
  EXPECT_TRUE(Has(why.out, "attempts 2/2 (6 runs)")) << why.out;
  CliResult why_json = Cli({"jobs", "why", n});
  EXPECT_EQ(why_json.json["reasons"][0]["evidence"].value("charged_attempts", -1), 2);

  CliResult timeline = Cli({"jobs", "timeline", n}, false);
  ASSERT_EQ(timeline.exit_code, 0) << timeline.err;
  const std::string ran_out =
      "the job is dead: its attempts ran out (attempts 2/2, last error error)";
  size_t ends = 0;
  for (size_t at = timeline.out.find(ran_out); at != std::string::npos;
       at = timeline.out.find(ran_out, at + 1)) {
    ++ends;
  }
  EXPECT_EQ(ends, 3u) << "each move to dead, two cleared by retries:\n" << timeline.out;
  EXPECT_TRUE(Has(timeline.out, "retried by cli:")) << timeline.out;
  EXPECT_TRUE(Has(timeline.out, ": attempts and crashes reset, checkpoint dropped (fresh)"))
      << timeline.out;
  EXPECT_TRUE(Has(timeline.out, " (operation " + std::to_string(op) +
                                    "): attempts and crashes reset, checkpoint kept"))
      << timeline.out;
  // Ordered: the end, then the retry, then the next claim.
  EXPECT_LT(timeline.out.find(ran_out), timeline.out.find("retried by"));
  EXPECT_LT(timeline.out.find("retried by"), timeline.out.find("attempt 3 claimed"));
  const Json events = Timeline(id)["events"];
  int operators = 0;
  for (const Json& e : events) {
    if (e.value("kind", "") != "operator") continue;
    ++operators;
    EXPECT_EQ(e["evidence"].value("action", ""), "retry");
    EXPECT_EQ(e["evidence"].value("from", ""), "dead");
  }
  EXPECT_EQ(operators, 2) << events.dump(1);

  CliResult audit = Cli({"audit"});
  EXPECT_TRUE(Has(audit.out, "{\\\"fresh\\\":true,\\\"job\\\":" + n + "}")) << audit.out;
}

// Names in tables are cut by display width (never inside a character),
// with a marker; `--wide` shows them whole.
TEST_P(CliTest, TablesCutNamesByDisplayWidthWithAMarker) {
  const std::string long_task = "rechnungen-versand-\xC3\xBC" "bermorgen-gro\xC3\x9F" "kunden";
  const std::string long_queue = "transactional-emails-for-customers-in-europe";
  // 18 characters two columns wide each: 36 columns.
  const std::string cjk_queue =
      "\u65E5\u672C\u8A9E\u306E\u30AD\u30E5\u30FC\u306E\u540D\u524D\u306F\u3068\u3066"
      "\u3082\u9577\u3044\u3067\u3059";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"add", "t", "--queue", "transactional-emails"},
           {"add", "t", "--queue", "transactional-emailz"},
           {"add", "t", "--queue", "gr\xC3\xB6sse-\xC3\xA4nderung"},
           {"add", long_task},
           {"add", "t", "--queue", long_queue},
           {"add", "t", "--queue", cjk_queue}}) {
    ASSERT_EQ(Cli(args).exit_code, 0) << args[1];
  }
  // Where "0/5" (the ATTEMPT column) starts, in characters (all of these
  // are one column wide).
  auto attempt_column = [](const std::string& line) {
    const size_t at = line.find(" 0/5");
    size_t chars = 0;
    for (size_t i = 0; i < at && at != std::string::npos; ++i) chars += (line[i] & 0xC0) != 0x80;
    return at == std::string::npos ? -1 : static_cast<int>(chars);
  };
  CliResult r = Cli({"jobs"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(warden::InvalidUtf8At(r.out), std::string::npos) << "a character was split:\n"
                                                             << r.out;
  EXPECT_NE(r.out.find("transactional-emails "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("transactional-emailz "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gr\xC3\xB6sse-\xC3\xA4nderung "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(long_task), std::string::npos) << "cut: " << r.out;
  EXPECT_EQ(r.out.find(long_queue), std::string::npos) << "cut: " << r.out;
  EXPECT_NE(r.out.find("\xE2\x80\xA6 "), std::string::npos) << "the cut is marked: " << r.out;
  std::istringstream lines(r.out);
  std::string line;
  std::set<int> columns;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    if (line.find("\u65E5") == std::string::npos) columns.insert(attempt_column(line));
  }
  EXPECT_EQ(columns.size(), 1u) << "columns line up:\n" << r.out;
  EXPECT_EQ(columns.count(-1), 0u) << r.out;
  // The queue column is 20 wide: nine wide characters (18), the marker, and
  // one space to fill it.
  EXPECT_NE(r.out.find(cjk_queue.substr(0, 9 * 3) + "\u2026 " + "    0/5"), std::string::npos)
      << r.out;

  r = Cli({"jobs", "--wide"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(long_task + " "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(long_queue + " "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(cjk_queue + " "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\xE2\x80\xA6"), std::string::npos) << r.out;

  const std::string long_name = "arbeiter-f\xC3\xBCr-die-\xC3\xBC" "berweisungen-nummer-eins";
  StartWorker(long_name);
  r = Cli({"workers"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(warden::InvalidUtf8At(r.out), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(long_name), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\xE2\x80\xA6 "), std::string::npos) << r.out;
  r = Cli({"workers", "--wide"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(long_name + " "), std::string::npos) << r.out;
}

// About a database on a server: one that does not exist there, a server
// that does not answer. (SQLite's counterpart: SqliteFileCliTest above.)
class PostgresCliTest : public CliTest {
 protected:
  // db() with its database name replaced.
  std::string WithDatabase(const std::string& name) const {
    const size_t path = db().find('/', db().find("://") + 3);
    const size_t query = db().find('?', path);
    return db().substr(0, path) + "/" + name +
           (query == std::string::npos ? "" : db().substr(query));
  }
};

TEST_P(PostgresCliTest, DatabaseThatCannotBeReachedExitsOne) {
  // Each URL, and what the error must name.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {WithDatabase("no_such_database"), "no_such_database"},
      {"postgresql://postgres@127.0.0.1:1/warden", "port 1"},  // nothing listens there
  };
  for (const auto& [url, named] : cases) {
    for (auto args : std::vector<std::vector<std::string>>{
             {"add", "--cmd", "true"}, {"stats"}, {"worker", "--allow-cmd"}}) {
      // A worker waits up to --start-timeout for a server that does not
      // answer (PgOutageClusterTest); one that refuses is not waited for.
      if (args[0] == "worker" && named == "port 1") {
        args.insert(args.end(), {"--start-timeout", "0s"});
      }
      CliResult r = RunWithDb(url, args);
      EXPECT_EQ(r.exit_code, 1) << url << " " << args[0] << ": " << r.err;
      EXPECT_TRUE(OneLineError(r)) << url << " " << args[0];
      EXPECT_NE(r.err.find(named), std::string::npos) << url << " " << args[0] << ": " << r.err;
      EXPECT_EQ(r.out, "") << url << " " << args[0];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CliTest, ::testing::ValuesIn(AllBackends()), BackendName);
INSTANTIATE_TEST_SUITE_P(Backends, SqliteFileCliTest, ::testing::Values(Backend::kSqlite),
                         BackendName);
INSTANTIATE_TEST_SUITE_P(Backends, PostgresCliTest, ::testing::Values(Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace wt
