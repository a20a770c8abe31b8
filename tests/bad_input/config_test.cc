// Rows "Configuration file" of docs/bad-input.md: a bad warden.toml, or a
// bad WARDEN_* value, is one line naming the file, line and column (or the
// variable) and the key; exit 2 for what is written, 1 for a file that
// cannot be read; and the command touches nothing: no database file, no
// job, no worker.
#include "bad_input.h"

#include <fstream>

namespace bi {
namespace {

class ConfigFileTest : public BadInputTest {
 protected:
  std::string WriteConfig(const std::string& text) {
    const std::string path = dir() + "/bad-" + std::to_string(++files_) + ".toml";
    std::ofstream(path) << text;
    return path;
  }
  // A database no command may create or change: on SQLite a path that
  // must stay missing; on PostgreSQL db(), whose jobs and workers are
  // counted after.
  std::string Untouched() const { return postgres() ? db() : dir() + "/untouched.db"; }
  void ExpectUntouched() {
    if (!postgres()) {
      EXPECT_FALSE(Exists(Untouched())) << "the database was created";
      return;
    }
    auto n = client().CountUnfinished();
    ASSERT_TRUE(n.has_value()) << n.error().ToString();
    EXPECT_EQ(*n, 0) << "a job was added";
    EXPECT_TRUE(Workers().empty()) << Workers().dump();
  }
  // `env VARS... warden --db DB ARGS...`, logged for bad_input_doc.
  CliResult WardenWithEnv(const std::vector<std::string>& vars, const std::string& db,
                          const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/env", "-u", "WARDEN_CONFIG"};
    argv.insert(argv.end(), vars.begin(), vars.end());
    argv.insert(argv.end(), {WARDEN_BIN, "--db", db});
    argv.insert(argv.end(), args.begin(), args.end());
    CliResult r = wt::RunToExit(argv, dir() + "/env-" + std::to_string(++files_), Millis(60'000));
    LogRun(argv, r);
    return r;
  }
  // Each command refuses `file` the same way: exit `code`, one line saying
  // `says` (after the file's path, when it starts with ':').
  void ExpectRefusedByEveryCommand(const std::string& file, int code, const std::string& says) {
    const std::vector<std::vector<std::string>> commands = {
        {"init"},
        {"add", "t"},
        {"worker", "--allow-cmd"},
        {"jobs"},
        {"serve", "--listen", "127.0.0.1:0"},
        {"config", "check"}};
    const std::string whole = says.rfind(":", 0) == 0 ? file + says : says;
    for (const auto& command : commands) {
      std::vector<std::string> args = {"--config", file};
      args.insert(args.end(), command.begin(), command.end());
      CliResult r = Warden(Untouched(), args);
      EXPECT_EQ(r.exit_code, code) << command[0] << ": " << r.err;
      EXPECT_TRUE(OneLineError(r, whole)) << command[0];
      EXPECT_EQ(r.out, "") << command[0];
    }
    ExpectUntouched();
  }

  int files_ = 0;
};

TEST_P(ConfigFileTest, FilesThatAreNotWardenTomlAreRefusedByEveryCommandTouchingNothing) {
  ExpectRefusedByEveryCommand(WriteConfig("[worker]\nlease = \"10s\n"), 2, ":2:");
  ExpectRefusedByEveryCommand(WriteConfig("[worker\nlease = \"10s\"\n"), 2, ":1:");
  ExpectRefusedByEveryCommand(WriteConfig("[worker]\nlease = \"1s\"\nlease = \"2s\"\n"), 2, ":3:");
  ExpectRefusedByEveryCommand(WriteConfig("[store]\ndb = \"caf\xe9.db\"\n"), 2, ":2:");
  ExpectRefusedByEveryCommand(
      WriteConfig("[worker]\nconcurency = 8\n"), 2,
      ":2:1: unknown key 'worker.concurency' (did you mean 'concurrency'?)");
  ExpectRefusedByEveryCommand(WriteConfig("[workers]\nconcurrency = 8\n"), 2,
                              ":1:2: unknown section [workers] (did you mean [worker]?)");
  ExpectRefusedByEveryCommand(WriteConfig("db = \"jobs.db\"\n"), 2,
                              ":1:1: 'db' is outside any section: write it under [store]");
  ExpectRefusedByEveryCommand(WriteConfig("[worker]\nconcurrency = \"8\"\n"), 2,
                              ":2:15: worker.concurrency must be an integer, not a string (\"8\")");
  ExpectRefusedByEveryCommand(
      WriteConfig("[worker]\nlease = 30\n"), 2,
      ":2:9: worker.lease must be a duration string such as \"30s\" or \"1h30m\", not an integer "
      "(30)");
  ExpectRefusedByEveryCommand(WriteConfig("[worker]\nqueues = \"a,b\"\n"), 2,
                              ":2:10: worker.queues must be an array of queue names");
  ExpectRefusedByEveryCommand(WriteConfig("[tasks]\nmail.send = \"send.sh\"\n"), 2,
                              "(a task name with a dot in it is quoted: \"a.b\" = ...)");
  ExpectRefusedByEveryCommand(WriteConfig("[tasks]\n\"a=b\" = \"x\"\n"), 2,
                              ":2:1: [tasks] task must not contain '='");
  ExpectRefusedByEveryCommand(WriteConfig("[tasks]\nresize = \"\"\n"), 2,
                              ":2:10: tasks.resize must be a shell command, not empty");
}

TEST_P(ConfigFileTest, ValuesTheFlagsRefuseAreRefusedWithTheirLine) {
  struct Case {
    std::string file, says;
  };
  const Case worker_cases[] = {
      {"[worker]\nlease = \"soon\"\n",
       ":2:9: worker.lease: invalid duration 'soon': must start with a number"},
      {"[worker]\nconcurrency = 0\n", ":2:15: worker.concurrency: Value 0 not in range 1 to 4096"},
      {"[worker]\nlog_format = \"yaml\"\n",
       ":2:14: worker.log_format must be text or json, not 'yaml'"},
      {"[worker]\nmetrics_listen = \"localhost\"\n",
       ":2:18: worker.metrics_listen 'localhost' is not ADDR:PORT"},
      // Two keys at once: no one line is to blame (config check shows both).
      {"[worker]\nlease = \"2s\"\nheartbeat = \"1s\"\n",
       "the lease (2s) must be at least three heartbeat intervals (1s)"},
  };
  for (const Case& c : worker_cases) {
    const std::string file = WriteConfig(c.file);
    const std::string whole = c.says.rfind(":", 0) == 0 ? file + c.says : c.says;
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"worker", "--allow-cmd"}, {"config", "check"}}) {
      std::vector<std::string> args = {"--config", file};
      args.insert(args.end(), command.begin(), command.end());
      CliResult r = Warden(Untouched(), args);
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_TRUE(OneLineError(r, whole)) << command[0];
    }
  }
  const std::string serve = WriteConfig("[server]\nlisten = \"0.0.0.0:0\"\nno_auth = true\n");
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"serve"}, {"config", "check"}}) {
    std::vector<std::string> args = {"--config", serve};
    args.insert(args.end(), command.begin(), command.end());
    CliResult r = Warden(Untouched(), args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(OneLineError(r, serve + ":3:11: server.no_auth is refused on 0.0.0.0"));
  }
  ExpectUntouched();
  // A command that does not use [worker] runs with a bad value there.
  const std::string bad_lease = WriteConfig("[worker]\nlease = \"soon\"\n");
  CliResult add = Warden(db(), {"--config", bad_lease, "add", "t"});
  EXPECT_EQ(add.exit_code, 0) << add.err;
}

TEST_P(ConfigFileTest, ValuesFromTheEnvironmentAreCheckedAsTheFlagsAndNamed) {
  const std::pair<std::string, std::string> cases[] = {
      {"WARDEN_WORKER_LEASE=soon", "WARDEN_WORKER_LEASE: invalid duration 'soon': must start"},
      {"WARDEN_WORKER_CONCURRENCY=eight",
       "WARDEN_WORKER_CONCURRENCY: 'eight' is not a decimal integer"},
      {"WARDEN_WORKER_CONCURRENCY=0", "WARDEN_WORKER_CONCURRENCY: Value 0 not in range 1 to 4096"},
      {"WARDEN_WORKER_ALLOW_CMD=yes", "WARDEN_WORKER_ALLOW_CMD must be true or false, not 'yes'"},
  };
  for (const auto& [var, says] : cases) {
    // A task to run, so that a worker would start if the value were taken.
    CliResult r = WardenWithEnv({var}, Untouched(),
                                {"--config", "/dev/null", "worker", "--task", "t=true"});
    EXPECT_EQ(r.exit_code, 2) << var << ": " << r.err;
    EXPECT_TRUE(OneLineError(r, says)) << var;
  }
  ExpectUntouched();
}

TEST_P(ConfigFileTest, AFileThatCannotBeReadIsExit1AndNamesWhoNamedIt) {
  const std::string missing = dir() + "/missing.toml";
  CliResult flag = Warden(Untouched(), {"--config", missing, "add", "t"});
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_TRUE(OneLineError(flag, "cannot read the configuration file '" + missing +
                                     "' (--config): No such file or directory"));
  CliResult env =
      WardenWithEnv({"WARDEN_CONFIG=" + missing}, Untouched(), {"worker", "--allow-cmd"});
  EXPECT_EQ(env.exit_code, 1);
  EXPECT_TRUE(OneLineError(env, "(WARDEN_CONFIG): No such file or directory"));
  CliResult directory = Warden(Untouched(), {"--config", dir(), "jobs"});
  EXPECT_EQ(directory.exit_code, 1);
  EXPECT_TRUE(OneLineError(directory, "(--config): Is a directory"));
  CliResult empty = Warden(Untouched(), {"--config", "", "stats"});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_TRUE(OneLineError(empty, "--config names no file (to read none: --config /dev/null)"));
  // --json: the error document, as for any failure.
  CliResult json = Warden(Untouched(), {"--json", "--config", missing, "add", "t"});
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_EQ(json.json["error"]["code"], "not_found") << json.out;
  ExpectUntouched();
}

INSTANTIATE_TEST_SUITE_P(Backends, ConfigFileTest, ::testing::ValuesIn(wt::AllBackends()),
                         wt::BackendName);

}  // namespace
}  // namespace bi
