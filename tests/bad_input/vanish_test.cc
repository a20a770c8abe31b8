// Row "database that disappears mid-run" of docs/bad-input.md:
//  - SQLite: the file deleted, or its file system unmounted, under a running
//    worker and an open Client. Nothing more is written to the vanished
//    file (SQLite would go on writing to it, and what it accepted would
//    vanish with the last handle): every write fails with one line naming
//    it, the worker says so and keeps retrying, and a job enqueued at the
//    path afterwards lands in a fresh file, where it waits for a worker.
//  - PostgreSQL: the server stopped mid-run (a private cluster, so other
//    tests are not disturbed), and URLs that reach no server.
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "bad_input.h"
#include "pg_test_db.h"
#include "run_dir.h"

namespace bi {
namespace {

using warden::JobState;
using warden::StatusCode;

const char kMoved[] = "was deleted, moved or replaced after this process opened it";

class VanishTest : public BadInputTest {
 protected:
  // Runs `worker` on `path` and a job that waits for `go`; returns the job's
  // id once it runs. `client` is opened on the same file before it vanishes.
  int64_t StartRunningJob(const std::string& path, std::unique_ptr<wt::Child>* worker,
                          std::unique_ptr<warden::Client>* client) {
    std::vector<std::string> argv = {WARDEN_BIN, "--db", path, "worker", "--allow-cmd",
                                     "--name", "w"};
    for (const std::string& f : FastFlags()) argv.push_back(f);
    *worker = wt::Child::Spawn(argv, dir() + "/w.out", dir() + "/w.log");
    auto c = warden::Client::Open(path);
    EXPECT_TRUE(c.has_value()) << c.error().ToString();
    if (!c.has_value()) return -1;
    *client = std::move(*c);
    warden::JobSpec s;
    s.task = "command";
    s.command = Job("log start; sleep 30");
    auto id = (*client)->Enqueue(s);
    EXPECT_TRUE(id.has_value());
    if (!id.has_value()) return -1;
    EXPECT_TRUE(wt::WaitFor([&] { return LedgerHas(id->id, 1, "start"); }))
        << (*worker)->Stderr();
    return id->id;
  }
  // After the file vanished: writes through the old Client are refused, the
  // worker says why and lives on, and the path starts afresh.
  void ExpectVanishedHandledClearly(const std::string& path, wt::Child& worker,
                                    warden::Client& old_client) {
    warden::JobSpec s;
    s.task = "t";
    auto r = old_client.Enqueue(s);
    ASSERT_FALSE(r.has_value()) << "accepted into a file nobody will see again";
    EXPECT_EQ(r.error().code(), StatusCode::kUnavailable);
    EXPECT_NE(r.error().message().find(kMoved), std::string::npos) << r.error().ToString();
    EXPECT_NE(r.error().message().find(path), std::string::npos) << r.error().ToString();
    const std::string said = "heartbeat failed, retrying: unavailable: the database file '" +
                             path + "' " + kMoved;
    EXPECT_TRUE(wt::WaitFor([&] { return worker.Stderr().find(said) != std::string::npos; }))
        << worker.Stderr();
    // As in any outage, it stops its job before the lease could pass on.
    EXPECT_TRUE(wt::WaitFor([&] {
      return worker.Stderr().find("no heartbeat for") != std::string::npos;
    })) << worker.Stderr();
    EXPECT_FALSE(worker.Exited()) << worker.Stderr();

    // The path starts afresh (a missing file is created on first use): a job
    // enqueued now is kept there, and a new worker runs it.
    CliResult added = Warden(path, {"--json", "add", "--cmd", Job("log fresh")});
    ASSERT_EQ(added.exit_code, 0) << added.err;
    const int64_t fresh = added.json["id"].get<int64_t>();
    std::vector<std::string> argv = {WARDEN_BIN, "--db", path, "worker", "--allow-cmd",
                                     "--name", "w2"};
    for (const std::string& f : FastFlags()) argv.push_back(f);
    auto w2 = wt::Child::Spawn(argv, dir() + "/w2.out", dir() + "/w2.log");
    ASSERT_TRUE(wt::WaitFor([&] { return LedgerHas(fresh, 1, "fresh"); })) << w2->Stderr();
    auto c = warden::Client::Open(path);
    ASSERT_TRUE(c.has_value());
    EXPECT_TRUE(wt::WaitFor([&] {
      auto j = (*c)->GetJob(fresh);
      return j.has_value() && j->state == JobState::kSucceeded;
    }));
    // SIGTERM: the old worker stops cleanly although it cannot say goodbye.
    worker.Signal(SIGTERM);
    EXPECT_TRUE(worker.WaitExit(Millis(60'000)));
    EXPECT_EQ(worker.ExitCode(), 0) << worker.Stderr();
  }
};

TEST_P(VanishTest, DatabaseFileDeletedUnderARunningWorker) {
  const std::string path = dir() + "/jobs.db";
  std::unique_ptr<wt::Child> worker;
  std::unique_ptr<warden::Client> client;
  ASSERT_GT(StartRunningJob(path, &worker, &client), 0);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  ExpectVanishedHandledClearly(path, *worker, *client);
}

TEST_P(VanishTest, FileSystemUnmountedUnderARunningWorker) {
  if (!RequireMounts()) return;
  const std::string disk = dir() + "/disk", path = disk + "/jobs.db";
  std::filesystem::create_directories(disk);
  std::string error;
  auto m = Mount::Tmpfs(disk, "16m", &error);
  ASSERT_TRUE(m) << error;
  Mount* mount = Keep(std::move(m));
  std::unique_ptr<wt::Child> worker;
  std::unique_ptr<warden::Client> client;
  ASSERT_GT(StartRunningJob(path, &worker, &client), 0);
  // Busy (the worker has it open): detached, it lives on for those who hold
  // it, and the path now shows the empty directory beneath.
  ASSERT_NE(umount2(disk.c_str(), 0), 0);
  EXPECT_EQ(errno, EBUSY);
  mount->Unmount();
  EXPECT_FALSE(Exists(path));
  ExpectVanishedHandledClearly(path, *worker, *client);
}

// ---- PostgreSQL ----

// A private cluster: stopping it disturbs no other test.
class PgServerGoneTest : public BadInputTest {
 protected:
  void SetUp() override {
    WARDEN_REQUIRE_PG();  // says whether PostgreSQL is expected here at all
    (void)warden::testing::SweepOrphanedRuns("warden-bad-pg");  // clusters of killed runs
    std::string error;
    root_ = warden::testing::MakeRunDir("warden-bad-pg", &error);  // 0755: for postgres
    ASSERT_FALSE(root_.empty()) << error;
    cluster_ = root_ + "/c";
    std::string out;
    if (!Script("start", &out)) {
      if (warden::testing::InCi()) FAIL() << "could not start a private PostgreSQL cluster";
      GTEST_SKIP() << "could not start a private PostgreSQL cluster (scripts/pg-cluster.sh)";
    }
    UsePostgresServer(out.substr(0, out.find('\n')));
    BadInputTest::SetUp();
  }
  void TearDown() override {
    if (!cluster_.empty() && !Script("stop")) {
      std::cerr << "[ bad-input] could not stop the cluster in " << cluster_ << "\n";
    }
    BadInputTest::TearDown();
    if (!root_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(root_, ec);
    }
  }
  bool Script(const std::string& action, std::string* out = nullptr) {
    const std::string base = root_ + "/script-" + std::to_string(++seq_);
    const warden::testing::CmdResult r = warden::testing::RunPgCluster(action, cluster_, base);
    if (out) *out = r.out;
    if (r.exit_code != 0) std::cerr << r.Describe() << "\n";
    return r.exit_code == 0;
  }

 private:
  std::string root_, cluster_;
  int seq_ = 0;
};

TEST_P(PgServerGoneTest, ServerStoppedMidRunLosesNothing) {
  // A lease that outlasts the outage: the worker only waits. (Outages past
  // the lease: tests/integration/pg_outage_test.cc.)
  wt::Worker& a = StartWorker("a", FastFlags({{"--lease", "30s"}, {"--heartbeat", "1s"},
                                             {"--keepalive-threshold", "30s"}}));
  std::vector<int64_t> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(Add(Job("log start; sleep 1; log end")));
  ASSERT_TRUE(wt::WaitFor([&] { return !LedgerFor(ids[0], "start").empty(); }));

  ASSERT_TRUE(Script("stop"));
  CliResult add = Warden(db(), {"add", "t"});
  EXPECT_EQ(add.exit_code, 1) << add.err;
  EXPECT_TRUE(OneLineError(add, "cannot connect to PostgreSQL: "));
  auto c = warden::Client::Open(db());
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(wt::WaitFor([&] { return a.LogHas("failed, retrying"); })) << a.Log();
  EXPECT_FALSE(a.proc->Exited()) << a.Log();

  ASSERT_TRUE(Script("restart"));
  ids.push_back(Add(Job("log start; log end")));
  ASSERT_TRUE(wt::WaitFor([&] {
    for (int64_t id : ids) {
      if (!JobInState(id, JobState::kSucceeded)) return false;
    }
    return true;
  }, Millis(60'000))) << a.Log();
  for (int64_t id : ids) {
    auto job = GetJob(id);
    ASSERT_TRUE(job);
    int succeeded = 0;
    for (const auto& at : job->attempts) succeeded += at.outcome == "succeeded";
    EXPECT_EQ(succeeded, 1) << "job " << id;
  }
  auto all = client().ListJobs(warden::JobFilter{});
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), ids.size()) << "the refused enqueue left nothing behind";
}

// No server at all: these URLs reach nothing.
class PgUnreachableTest : public BadInputTest {};

TEST_P(PgUnreachableTest, UrlsThatReachNoServerAreOneLineErrors) {
  for (const auto& [url, says] : std::vector<std::pair<std::string, std::string>>{
           {"postgresql://postgres@127.0.0.1:1/warden", "port 1 failed: Connection refused"},
           {"postgresql://postgres@no-such-host.invalid/warden",
            "could not translate host name \"no-such-host.invalid\""},
       }) {
    for (auto args : EveryKindOfCommand()) {
      // A worker waits for a server it cannot reach (--start-timeout, 30s by
      // default), says so on a line of its own, then fails like the rest.
      const bool worker = args[0] == "worker";
      if (worker) args.insert(args.end(), {"--start-timeout", "1s"});
      const wt::SteadyTime start = std::chrono::steady_clock::now();
      CliResult r = Warden(url, args);
      EXPECT_EQ(r.exit_code, 1) << url << " " << args[0] << ": " << r.err;
      if (worker) {
        const std::string retry = "cannot start yet, retrying for up to 1s: ";
        EXPECT_NE(r.err.find(retry + "cannot connect to PostgreSQL: "), std::string::npos) << r.err;
        const size_t last = r.err.rfind('\n', r.err.size() - 2);
        r.err = r.err.substr(last == std::string::npos ? 0 : last + 1);
        EXPECT_NE(r.err.find("(still, after retrying for 1s; --start-timeout)"), std::string::npos)
            << r.err;
      }
      EXPECT_TRUE(OneLineError(r, "cannot connect to PostgreSQL: ")) << args[0];
      EXPECT_TRUE(OneLineError(r, says)) << args[0];
      EXPECT_LT(wt::MillisSince(start), 30'000) << url << " " << args[0];
    }
    auto c = warden::Client::Open(url);
    ASSERT_FALSE(c.has_value());
    EXPECT_EQ(c.error().code(), StatusCode::kUnavailable);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, VanishTest, ::testing::Values(wt::Backend::kSqlite),
                         wt::BackendName);
INSTANTIATE_TEST_SUITE_P(Backends, PgServerGoneTest, ::testing::Values(wt::Backend::kPostgres),
                         wt::BackendName);
// No server needed: the fixture's directory is all it uses.
INSTANTIATE_TEST_SUITE_P(NoServer, PgUnreachableTest, ::testing::Values(wt::Backend::kSqlite),
                         [](const auto&) { return std::string("no_server"); });

}  // namespace
}  // namespace bi
