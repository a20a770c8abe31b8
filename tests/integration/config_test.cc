// warden.toml with the real binary (docs/configuration.md): a worker set
// up by the file alone runs a job; the environment overrides the file and
// a flag overrides both, for a key of every section; `warden config check`
// says where each value came from and never shows a password. Bad files:
// tests/bad_input/config_test.cc (rows of docs/bad-input.md).
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "harness.h"
#include "warden/text.h"

namespace wt {
namespace {

class ConfigTest : public IntegrationTest {
 protected:
  // `text` written to a file of the test's directory; its path.
  std::string WriteConfig(const std::string& text, const std::string& name = "warden.toml") {
    const std::string path = dir() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // A TOML basic string (paths and URLs of these tests: no control bytes).
  static std::string Quoted(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  }
  // The fast settings of the test plan, as a [worker] section.
  static std::string FastWorker(const std::string& more) {
    return "[worker]\nheartbeat = \"100ms\"\nlease = \"1s\"\nkeepalive_threshold = \"1s\"\n"
           "sweep_interval = \"100ms\"\nkill_grace = \"200ms\"\n" + more;
  }
  // `env -u WARDEN_DB VARS... warden ARGS...` to its end.
  CliResult Run(const std::vector<std::string>& vars, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/env", "-u", "WARDEN_DB", "-u", "WARDEN_CONFIG"};
    argv.insert(argv.end(), vars.begin(), vars.end());
    argv.push_back(WARDEN_BIN);
    argv.insert(argv.end(), args.begin(), args.end());
    return RunToExit(argv, dir() + "/run-" + std::to_string(++runs_), kDeadline);
  }
  // A worker started as `env -u WARDEN_DB VARS... warden ARGS...`.
  wt::Worker& Start(const std::string& name, const std::vector<std::string>& vars,
                    const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/env", "-u", "WARDEN_DB", "-u", "WARDEN_CONFIG"};
    argv.insert(argv.end(), vars.begin(), vars.end());
    argv.push_back(WARDEN_BIN);
    argv.insert(argv.end(), args.begin(), args.end());
    return StartWorkerProcess(name, argv);
  }
  Json RowOf(const wt::Worker& w) { return WorkerRow(WorkerIdOf(w.pid())); }

  int runs_ = 0;
};

TEST_P(ConfigTest, AWorkerSetUpByTheFileAloneRunsAJob) {
  const std::string file =
      WriteConfig("[store]\ndb = " + Quoted(db()) + "\n" +
                  FastWorker("queues = [\"cfg\"]\nconcurrency = 3\nnode = \"rack-7\"\n") +
                  "[tasks]\ngreet = \"cat > /dev/null; echo hello\"\n");
  wt::Worker& w = Start("from-file", {}, {"--config", file, "worker", "--name", "from-file"});
  const Json row = RowOf(w);
  EXPECT_EQ(row.value("concurrency", 0), 3) << row.dump();
  EXPECT_EQ(row.value("queues", Json()), Json::array({"cfg"})) << row.dump();
  EXPECT_EQ(row.value("node", ""), "rack-7") << row.dump();
  // Through WARDEN_CONFIG too, with no --db anywhere: `add` finds the store in the file.
  CliResult add = Run({"WARDEN_CONFIG=" + file}, {"--json", "add", "greet", "--queue", "cfg"});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  const int64_t id = add.json.value("id", int64_t{-1});
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kSucceeded); }))
      << w.Log();
  // The attempt's line follows its outcome's commit (Worker::Impl::LogWritten).
  EXPECT_TRUE(WaitFor([&] {
    return w.LogHas("job " + std::to_string(id) + " (greet) attempt 1: succeeded");
  })) << w.Log();
}

TEST_P(ConfigTest, TheEnvironmentBeatsTheFileAndAFlagBeatsBoth) {
  // The file names another database, a concurrency and a failing task:
  // each is overridden, and the other database is never touched.
  const std::string elsewhere = dir() + "/not-this.db";
  const std::string file = WriteConfig(
      "[store]\ndb = " + Quoted(elsewhere) + "\n" +
      FastWorker("queues = [\"cfg\"]\nconcurrency = 3\n") + "[tasks]\ngreet = \"exit 3\"\n");
  // [store] and [worker]: the environment over the file...
  wt::Worker& a = Start("by-env", {"WARDEN_DB=" + db(), "WARDEN_WORKER_CONCURRENCY=5"},
                        {"--config", file, "worker", "--name", "by-env"});
  EXPECT_EQ(RowOf(a).value("concurrency", 0), 5);
  // ...and flags over the environment ([tasks]: over the file's task).
  wt::Worker& b = Start(
      "by-flag", {"WARDEN_DB=" + dir() + "/nor-this.db", "WARDEN_WORKER_CONCURRENCY=5"},
      {"--config", file, "--db", db(), "worker", "--name", "by-flag", "--concurrency", "7",
       "--task", "greet=cat > /dev/null"});
  EXPECT_EQ(RowOf(b).value("concurrency", 0), 7);
  a.proc->Signal(SIGTERM);
  ASSERT_TRUE(a.proc->WaitExit(kDeadline)) << a.Log();
  const int64_t id = Cli({"add", "greet", "--queue", "cfg"}).json.value("id", int64_t{-1});
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kSucceeded); })) << b.Log();
  struct stat st {};
  EXPECT_NE(stat(elsewhere.c_str(), &st), 0) << "the file's database was created";
  EXPECT_NE(stat((dir() + "/nor-this.db").c_str(), &st), 0) << "WARDEN_DB's was created";

  // A boolean the file turns on, a flag turns off: with nothing else to
  // run, the worker refuses to start.
  const std::string allow = WriteConfig("[worker]\nallow_cmd = true\n", "allow.toml");
  CliResult off = Run({}, {"--db", db(), "--config", allow, "worker", "--allow-cmd=false"});
  EXPECT_EQ(off.exit_code, 2) << off.err;
  EXPECT_NE(off.err.find("this worker can run nothing"), std::string::npos) << off.err;

  // [server]: a flag over the environment over the file, in a real server.
  const std::string serve_file = WriteConfig("[server]\nlisten = \"nonsense\"\n", "serve.toml");
  CliResult check = Run({"WARDEN_SERVER_LISTEN=127.0.0.1:7999"},
                        {"--config", serve_file, "--json", "config", "check"});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.json["settings"]["server"]["listen"],
            Json({{"value", "127.0.0.1:7999"}, {"source", "env"},
                  {"env", "WARDEN_SERVER_LISTEN"}}));
  std::vector<std::string> argv = {"/usr/bin/env", "WARDEN_SERVER_LISTEN=also-nonsense",
                                   WARDEN_BIN, "--db", db(), "--config", serve_file, "serve",
                                   "--no-auth", "--listen", "127.0.0.1:0"};
  auto serve = Child::Spawn(argv, dir() + "/serve.out", dir() + "/serve.err");
  ASSERT_TRUE(PollUntil([&] { return serve->Stderr().find("serving on 127.0.0.1:") !=
                                         std::string::npos || serve->Exited(); },
                        kDeadline))
      << serve->Stderr();
  ASSERT_FALSE(serve->Exited()) << serve->Stderr();
  serve->Signal(SIGTERM);
  ASSERT_TRUE(serve->WaitExit(kDeadline));
  EXPECT_EQ(serve->ExitCode(), 0) << serve->Stderr();
}

TEST_P(ConfigTest, ConfigCheckSaysWhereEachValueCameFromAndShowsNoPassword) {
  const std::string file = WriteConfig(
      "# a comment\n[store]\ndb = \"postgresql://warden:s3cret-pw@db.invalid:5432/app\"\n"
      "[worker]\nlease = \"30s\"\nheartbeat = \"2s\"\n[tasks]\n\"mail.send\" = \"send.sh\"\n");
  chmod(file.c_str(), 0644);
  CliResult text = Run({"WARDEN_WORKER_CONCURRENCY=5"}, {"--config", file, "config", "check"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find("s3cret-pw"), std::string::npos) << text.out;
  EXPECT_EQ(text.err.find("s3cret-pw"), std::string::npos) << text.err;
  EXPECT_NE(text.out.find("# file: " + file + " (from --config)"), std::string::npos) << text.out;
  const auto has_line = [&](const std::string& pattern) {
    return std::regex_search(text.out, std::regex(pattern, std::regex::multiline));
  };
  EXPECT_TRUE(has_line("^db = \"postgresql://warden:\\*\\*\\*@db\\.invalid:5432/app\" +"
                       "# .*warden\\.toml:3$"))
      << text.out;
  EXPECT_TRUE(has_line("^concurrency = 5 +# env WARDEN_WORKER_CONCURRENCY$")) << text.out;
  EXPECT_TRUE(has_line("^lease = \"30s\" +# .*warden\\.toml:5$")) << text.out;
  EXPECT_TRUE(has_line("^queues = \\[\"default\"\\] +# default$")) << text.out;
  EXPECT_TRUE(has_line("^\"mail\\.send\" = \"send\\.sh\" +# .*warden\\.toml:8$")) << text.out;
  EXPECT_TRUE(has_line("^listen = \"127\\.0\\.0\\.1:7878\" +# default$")) << text.out;
  // Every user may read this file, and it holds a password.
  EXPECT_NE(text.err.find("warden: note: " + file + " holds a database password"),
            std::string::npos) << text.err;

  chmod(file.c_str(), 0600);
  CliResult json =
      Run({"WARDEN_WORKER_CONCURRENCY=5"}, {"--config", file, "--json", "config", "check"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.err, "");
  EXPECT_EQ(json.out.find("s3cret-pw"), std::string::npos) << json.out;
  const Json& s = json.json["settings"];
  EXPECT_EQ(json.json["file"], file);
  EXPECT_EQ(json.json["file_from"], "--config");
  EXPECT_EQ(s["store"]["db"], Json({{"value", "postgresql://warden:***@db.invalid:5432/app"},
                                    {"source", "file"}, {"line", 3}}));
  EXPECT_EQ(s["worker"]["concurrency"],
            Json({{"value", 5}, {"source", "env"}, {"env", "WARDEN_WORKER_CONCURRENCY"}}));
  EXPECT_EQ(s["worker"]["lease"], Json({{"value", "30s"}, {"source", "file"}, {"line", 5}}));
  EXPECT_EQ(s["worker"]["keepalive_threshold"], Json({{"value", "10s"}, {"source", "default"}}));
  EXPECT_EQ(s["tasks"]["mail.send"], Json({{"value", "send.sh"}, {"source", "file"}, {"line", 8}}));
  EXPECT_EQ(s["server"]["bulk_batch"], Json({{"value", 1000}, {"source", "default"}}));

  // The password of WARDEN_DB or --db: the same. A FILE argument is checked
  // instead of --config's.
  const std::string plain = WriteConfig("[worker]\nconcurrency = 2\n", "plain.toml");
  CliResult env = Run({"WARDEN_DB=postgresql://u:env-pw@h/d"},
                      {"--config", file, "--json", "config", "check", plain});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_EQ(env.out.find("env-pw"), std::string::npos) << env.out;
  EXPECT_EQ(env.json["file_from"], "the argument");
  EXPECT_EQ(env.json["settings"]["store"]["db"]["value"], "postgresql://u:***@h/d");
  EXPECT_EQ(env.json["settings"]["worker"]["concurrency"]["source"], "file");
  CliResult flag = Run({}, {"--db", "postgresql://u:flag-pw@h/d", "config", "check", plain});
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out.find("flag-pw"), std::string::npos) << flag.out;
  const std::regex from_the_flag("db = \"postgresql://u:\\*\\*\\*@h/d\" +# flag --db");
  EXPECT_TRUE(std::regex_search(flag.out, from_the_flag)) << flag.out;
}

// An address `config check` passes is one the command takes, through the
// same check (issue 35): localhost is loopback, for serve's listen and a
// worker's endpoints; a host name is refused by both, naming the key or
// the flag the value came from, never another.
TEST_P(ConfigTest, ListenAddressesAreCheckedAsTheCommandsCheckThem) {
  const std::string good = WriteConfig(
      "[server]\nlisten = \"localhost:0\"\nno_auth = true\n[worker]\n"
      "metrics_listen = \"localhost:0\"\n",
      "good.toml");
  CliResult checked = Run({}, {"--db", db(), "config", "check", good});
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  EXPECT_NE(checked.out.find("listen = \"localhost:0\""), std::string::npos) << checked.out;

  // serve takes it, on loopback (--no-auth is loopback only).
  auto serve = warden::testing::Child::Spawn({WARDEN_BIN, "--config", good, "--db", db(), "serve"},
                                             dir() + "/serve.out", dir() + "/serve.err");
  int port = 0;
  ASSERT_TRUE(WaitFor([&] {
    const std::string log = serve->Stderr();
    const size_t at = log.find("serving on localhost:");
    if (at != std::string::npos) port = std::atoi(log.c_str() + at + 21);
    return port > 0 || serve->Exited();
  })) << serve->Stderr();
  ASSERT_GT(port, 0) << serve->Stderr();
  CliResult health =
      RunToExit({"/usr/bin/curl", "-sS", "http://127.0.0.1:" + std::to_string(port) + "/healthz"},
                dir() + "/health", kDeadline);
  EXPECT_EQ(health.exit_code, 0) << health.err;
  EXPECT_EQ(health.out, R"({"status":"ok"})");
  serve->Kill();
  // And a worker's endpoint, from the file and from the flag.
  wt::Worker& w = Start("w", {}, {"--config", good, "--db", db(), "worker", "--allow-cmd"});
  EXPECT_TRUE(WaitFor([&] { return w.LogHas("serving /metrics on 127.0.0.1:"); })) << w.Log();
  wt::Worker& flagged =
      Start("f", {}, {"--db", db(), "worker", "--allow-cmd", "--health-listen", "localhost:0"});
  EXPECT_TRUE(WaitFor([&] { return flagged.LogHas("/healthz and /readyz on 127.0.0.1:"); }))
      << flagged.Log();

  // A host name: refused by config check and by the command alike, each
  // naming where the value came from.
  const std::string bad = WriteConfig("[server]\nlisten = \"db.example:7878\"\n", "bad-serve.toml");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--db", db(), "config", "check", bad},
        std::vector<std::string>{"--config", bad, "--db", db(), "serve"}}) {
    CliResult r = Run({}, args);
    EXPECT_EQ(r.exit_code, 2) << args[3] << ": " << r.err;
    EXPECT_NE(r.err.find("bad-serve.toml:2:"), std::string::npos) << args[3] << ": " << r.err;
    EXPECT_NE(r.err.find("server.listen 'db.example:7878': 'db.example' is not an IP address "
                         "or localhost"),
              std::string::npos)
        << args[3] << ": " << r.err;
  }
  const std::string bad_worker =
      WriteConfig("[worker]\nmetrics_listen = \"db.example:9998\"\n", "bad-worker.toml");
  CliResult worker_check = Run({}, {"--db", db(), "config", "check", bad_worker});
  EXPECT_EQ(worker_check.exit_code, 2) << worker_check.err;
  EXPECT_NE(worker_check.err.find("worker.metrics_listen 'db.example:9998'"), std::string::npos)
      << worker_check.err;
  CliResult worker_flag =
      Run({}, {"--db", db(), "worker", "--allow-cmd", "--metrics-listen", "db.example:9998"});
  EXPECT_EQ(worker_flag.exit_code, 2) << worker_flag.err;
  EXPECT_NE(worker_flag.err.find("--metrics-listen 'db.example:9998': 'db.example' is not an IP"),
            std::string::npos)
      << worker_flag.err;
  EXPECT_EQ(worker_flag.err.find("--listen"), std::string::npos) << worker_flag.err;
}

TEST_P(ConfigTest, ConfigAloneOrMistypedIsAUsageError) {
  CliResult alone = Run({}, {"config"});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_EQ(alone.err, "warden: usage: warden config needs a command: check [FILE] (see warden "
                       "--help)\n");
  CliResult typo = Run({}, {"config", "chek"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("chek; did you mean 'check'?"), std::string::npos) << typo.err;
}

// Every flag of `warden worker` and `warden serve` is a key, or has a
// reason not to be (docs/configuration.md): a new flag must choose.
TEST_P(ConfigTest, EveryFlagOfWorkerAndServeIsAKeyOrSaysWhyNot) {
  CliResult check = Run({}, {"--config", "/dev/null", "--json", "config", "check"});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  const std::map<std::string, std::set<std::string>> without_keys = {
      {"worker", {"--help", "--name", "--exit-when-idle", "--task"}}, {"serve", {"--help"}}};
  for (const auto& [command, section] : {std::pair{"worker", "worker"}, {"serve", "server"}}) {
    CliResult help = Run({}, {command, "--help"});
    ASSERT_EQ(help.exit_code, 0);
    std::set<std::string> flags;
    const std::regex option("^  (--[a-z-]+)", std::regex::multiline);
    for (auto m = std::sregex_iterator(help.out.begin(), help.out.end(), option);
         m != std::sregex_iterator(); ++m) {
      flags.insert((*m)[1]);
    }
    ASSERT_GT(flags.size(), 5u) << help.out;
    for (const std::string& flag : flags) {
      if (without_keys.at(command).count(flag)) continue;
      std::string key = flag.substr(2);
      std::replace(key.begin(), key.end(), '-', '_');
      EXPECT_TRUE(check.json["settings"][section].contains(key))
          << command << " " << flag << " has no key [" << section << "] " << key;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ConfigTest, ::testing::ValuesIn(AllBackends()), BackendName);

}  // namespace
}  // namespace wt
