// Settings (src/cli/config/settings.h): flags > WARDEN_* > warden.toml >
// defaults, key by key, for a key of every section, onto CLI11 options
// shaped like the real commands' flags; errors about a value told by where
// it came from. No processes.
#include "cli/config/settings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <algorithm>
#include <map>
#include <set>

namespace warden::cli::config {
namespace {

// The flags of the commands, as far as these tests need them.
struct Commands {
  CLI::App app{"warden"};
  std::string db = "./warden.db";
  int concurrency = 8;
  bool allow_cmd = false;
  std::string queues = "default", lease;
  std::vector<std::string> tasks;
  std::string listen = "127.0.0.1:7878";
  int max_connections = 10000;
  std::map<std::string, std::string> other;
  CLI::App* worker = nullptr;
  CLI::App* serve = nullptr;

  Commands() {
    app.fallthrough();
    app.add_option("--db", db);
    worker = app.add_subcommand("worker");
    worker->add_option("--concurrency", concurrency)->check(CLI::Range(1, 4096));
    worker->add_flag("--allow-cmd", allow_cmd);
    worker->add_option("--queues", queues);
    worker->add_option("--lease", lease);
    worker->add_option("--task", tasks)->allow_extra_args(false);
    serve = app.add_subcommand("serve");
    serve->add_option("--listen", listen);
    serve->add_option("--max-connections", max_connections)->check(CLI::Range(1, 1000000));
    // Every other key's flag, as a string (Apply needs each one).
    for (const ConfigKey& key : ConfigKeys()) {
      CLI::App* cmd = key.section == "worker" ? worker : key.section == "server" ? serve : &app;
      const std::string flag(key.flag);
      if (cmd->get_option_no_throw(flag) == nullptr) cmd->add_option(flag, other[key.dotted()]);
    }
  }
  void Parse(std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());
    app.parse(args);
  }
};

class SettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One file per test process: ctest runs these tests at once.
    path_ = ::testing::TempDir() + "warden-settings-test-" + std::to_string(getpid()) + ".toml";
    Write("");
  }
  void TearDown() override { std::remove(path_.c_str()); }
  void Write(const std::string& text) { std::ofstream(path_) << text; }
  EnvFn Env() const {
    return [this](const std::string& name) -> const char* {
      auto it = env_.find(name);
      return it == env_.end() ? nullptr : it->second.c_str();
    };
  }
  // Reads the file and applies [store], then `section` onto `cmd`.
  Result<Settings> Apply(Commands& c, CLI::App* cmd, std::string_view section) {
    WARDEN_ASSIGN_OR_RETURN(Settings s, Settings::Read(ConfigLocation{path_, "--config"}));
    WARDEN_RETURN_IF_ERROR(s.Apply(c.app, "store", Env()));
    if (cmd != nullptr) WARDEN_RETURN_IF_ERROR(s.Apply(*cmd, section, Env()));
    return s;
  }
  std::string SourceOf(const Settings& s, std::string_view section, std::string_view name) {
    const Applied* a = s.Find(*FindKey(section, name));
    return a ? a->source.ToString() : "<not applied>";
  }

  std::string path_;
  std::map<std::string, std::string> env_;
};

TEST_F(SettingsTest, FlagsBeatTheEnvironmentWhichBeatsTheFileWhichBeatsTheDefault) {
  const std::string file =
      "[store]\ndb = \"file.db\"\n[worker]\nconcurrency = 3\n[server]\nlisten = \"10.0.0.1:1\"\n";
  {  // the default alone: no file
    Commands c;
    c.Parse({"worker"});
    auto s = Settings::Read(std::nullopt);
    ASSERT_TRUE(s.has_value());
    ASSERT_TRUE(s->Apply(c.app, "store", Env()).ok());
    ASSERT_TRUE(s->Apply(*c.worker, "worker", Env()).ok());
    EXPECT_EQ(c.db, "./warden.db");
    EXPECT_EQ(c.concurrency, 8);
    EXPECT_EQ(SourceOf(*s, "worker", "concurrency"), "default");
  }
  Write(file);
  {  // the file over the default
    Commands c;
    c.Parse({"worker"});
    auto s = Apply(c, c.worker, "worker");
    ASSERT_TRUE(s.has_value()) << s.error().message();
    EXPECT_EQ(c.db, "file.db");
    EXPECT_EQ(c.concurrency, 3);
    EXPECT_EQ(SourceOf(*s, "store", "db"), path_ + ":2");
    EXPECT_EQ(SourceOf(*s, "worker", "concurrency"), path_ + ":4");
  }
  env_ = {{"WARDEN_DB", "env.db"}, {"WARDEN_WORKER_CONCURRENCY", "5"},
          {"WARDEN_SERVER_LISTEN", "10.0.0.2:2"}};
  {  // the environment over the file
    Commands c;
    c.Parse({"worker"});
    auto s = Apply(c, c.worker, "worker");
    ASSERT_TRUE(s.has_value()) << s.error().message();
    EXPECT_EQ(c.db, "env.db");
    EXPECT_EQ(c.concurrency, 5);
    EXPECT_EQ(SourceOf(*s, "worker", "concurrency"), "env WARDEN_WORKER_CONCURRENCY");
    Commands d;
    d.Parse({"serve"});
    auto t = Apply(d, d.serve, "server");
    ASSERT_TRUE(t.has_value()) << t.error().message();
    EXPECT_EQ(d.listen, "10.0.0.2:2");
  }
  {  // flags over the environment
    Commands c;
    c.Parse({"--db", "flag.db", "worker", "--concurrency", "7"});
    auto s = Apply(c, c.worker, "worker");
    ASSERT_TRUE(s.has_value()) << s.error().message();
    EXPECT_EQ(c.db, "flag.db");
    EXPECT_EQ(c.concurrency, 7);
    EXPECT_EQ(SourceOf(*s, "store", "db"), "flag --db");
    Commands d;
    d.Parse({"serve", "--listen", "127.0.0.1:3"});
    auto t = Apply(d, d.serve, "server");
    ASSERT_TRUE(t.has_value()) << t.error().message();
    EXPECT_EQ(d.listen, "127.0.0.1:3");
    EXPECT_EQ(SourceOf(*t, "server", "listen"), "flag --listen");
  }
  {  // an empty variable counts as unset
    env_ = {{"WARDEN_WORKER_CONCURRENCY", ""}};
    Commands c;
    c.Parse({"worker"});
    ASSERT_TRUE(Apply(c, c.worker, "worker").has_value());
    EXPECT_EQ(c.concurrency, 3);
  }
}

TEST_F(SettingsTest, TasksMergeByNameAndAFlagReplacesTheFilesCommand) {
  Write("[tasks]\nresize = \"python3 resize.py\"\nsend = \"send.sh\"\n");
  Commands c;
  c.Parse({"worker", "--task", "send=send-v2.sh", "--task", "extra=x"});
  auto s = Apply(c, c.worker, "worker");
  ASSERT_TRUE(s.has_value()) << s.error().message();
  // The file's first; a flag's later, so that it wins where both name a task.
  EXPECT_EQ(c.tasks, (std::vector<std::string>{"resize=python3 resize.py", "send=send-v2.sh",
                                               "extra=x"}));
  int from_file = 0;
  for (const Applied& a : s->applied()) {
    if (a.key == nullptr && a.source.kind == Source::Kind::kFile) ++from_file;
  }
  EXPECT_EQ(from_file, 1);  // resize; send is the flag's
}

TEST_F(SettingsTest, AValueFromTheFileOrEnvironmentGoesThroughTheFlagsChecks) {
  Write("[worker]\nconcurrency = 0\n");
  Commands c;
  c.Parse({"worker"});
  auto s = Apply(c, c.worker, "worker");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.error().message(),
            path_ + ":2:15: worker.concurrency: Value 0 not in range 1 to 4096");

  env_ = {{"WARDEN_WORKER_CONCURRENCY", "9999"}};
  Commands d;
  d.Parse({"worker"});
  s = Apply(d, d.worker, "worker");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().message(), "WARDEN_WORKER_CONCURRENCY: Value 9999 not in range 1 to 4096");

  Write("");
  const std::pair<const char*, const char*> bad_env[] = {
      {"WARDEN_WORKER_CONCURRENCY", "WARDEN_WORKER_CONCURRENCY: 'eight' is not a decimal integer"},
      {"WARDEN_WORKER_ALLOW_CMD", "WARDEN_WORKER_ALLOW_CMD must be true or false, not 'eight'"}};
  for (const auto& [name, says] : bad_env) {
    env_ = {{name, "eight"}};
    Commands e;
    e.Parse({"worker"});
    auto r = Apply(e, e.worker, "worker");
    ASSERT_FALSE(r.has_value()) << name;
    EXPECT_EQ(r.error().message(), says);
  }
  // A flag's own bad value is the command line's error, not a setting's.
  env_ = {};
  Commands f;
  EXPECT_THROW(f.Parse({"worker", "--concurrency", "0"}), CLI::ValidationError);
}

TEST_F(SettingsTest, ErrorsAboutAValueAreToldByWhereItCameFrom) {
  Write("[worker]\nlease = \"soon\"\n[server]\nlisten = \"x\"\n");
  env_ = {{"WARDEN_WORKER_QUEUES", "a,b"}};
  Commands c;
  c.Parse({"worker", "--concurrency", "2"});
  auto s = Apply(c, c.worker, "worker");
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_EQ(c.lease, "soon");  // checked by the command, which parses durations
  const auto told = [&](const std::string& m, std::string_view section = "") {
    return s->Attribute(InvalidArgument(m), section).message();
  };
  EXPECT_EQ(told("--lease: invalid duration 'soon': must start with a number"),
            path_ + ":2:9: worker.lease: invalid duration 'soon': must start with a number");
  EXPECT_EQ(told("--queues must name a queue"), "WARDEN_WORKER_QUEUES must name a queue");
  // From the command line, or no flag at all, or another flag's prefix: as it was.
  EXPECT_EQ(told("--concurrency: too many"), "--concurrency: too many");
  EXPECT_EQ(told("the lease (2s) must be at least three heartbeat intervals (1s)"),
            "the lease (2s) must be at least three heartbeat intervals (1s)");
  EXPECT_EQ(told("--leases are short"), "--leases are short");
  // [server] was not applied to this command: its --listen is not the file's.
  EXPECT_EQ(told("--listen 'x' is not ADDR:PORT", "server"), "--listen 'x' is not ADDR:PORT");
  EXPECT_EQ(told("--lease: bad", "server"), "--lease: bad");
}

TEST(LocateConfig, TheFlagThenTheVariableThenTheDefaultWhenItExists) {
  std::map<std::string, std::string> vars;
  const EnvFn env = [&](const std::string& name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  const std::string missing = "/nonexistent/warden.toml";
  EXPECT_FALSE(LocateConfig(std::nullopt, env, missing).has_value());
  auto found = LocateConfig(std::nullopt, env, "/dev/null");  // exists
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->from, "the default path");
  vars["WARDEN_CONFIG"] = "";  // unset
  EXPECT_FALSE(LocateConfig(std::nullopt, env, missing).has_value());
  vars["WARDEN_CONFIG"] = "/etc/env.toml";
  EXPECT_EQ(LocateConfig(std::nullopt, env, missing)->path, "/etc/env.toml");
  EXPECT_EQ(LocateConfig(std::nullopt, env, missing)->from, "WARDEN_CONFIG");
  EXPECT_EQ(LocateConfig("/etc/flag.toml", env, missing)->path, "/etc/flag.toml");
  EXPECT_EQ(LocateConfig("/etc/flag.toml", env, missing)->from, "--config");
  // A file named by the flag or the variable must exist; the default need not.
  auto read = Settings::Read(LocateConfig("/nonexistent/w.toml", env, missing));
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code(), StatusCode::kNotFound);
  auto empty = Settings::Read(LocateConfig("", env, missing));
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().message(), "--config names no file (to read none: --config /dev/null)");
}

TEST(ConfigKeys, NamesAndVariablesFollowOneRule) {
  EXPECT_EQ(FindKey("store", "db")->env(), "WARDEN_DB");
  EXPECT_EQ(FindKey("worker", "keepalive_threshold")->env(), "WARDEN_WORKER_KEEPALIVE_THRESHOLD");
  EXPECT_EQ(FindKey("server", "allow_cmd_jobs")->env(), "WARDEN_SERVER_ALLOW_CMD_JOBS");
  EXPECT_EQ(FindKey("server", "log_format")->flag, "--log-format");
  EXPECT_EQ(FindKey("worker", "log_format")->dotted(), "worker.log_format");
  EXPECT_EQ(FindKey("worker", "nope"), nullptr);
  std::set<std::string> dotted, vars;
  for (const ConfigKey& k : ConfigKeys()) {
    EXPECT_TRUE(dotted.insert(k.dotted()).second) << k.dotted();
    EXPECT_TRUE(vars.insert(k.env()).second) << k.env();
    // Never a variable warden gives a command job (docs/cli.md, "Command
    // jobs").
    EXPECT_NE(k.env(), "WARDEN_WORKER_ID");
  }
}

}  // namespace
}  // namespace warden::cli::config
