// Row "database locked by another process" of docs/bad-input.md: a process
// of another program holds SQLite's write lock (BEGIN EXCLUSIVE) for longer
// than warden's busy timeout (5 s). Writers wait that long, then fail with
// one line (kUnavailable); readers do not wait at all; a running worker
// retries and carries on when the lock is gone; nothing is lost.
//
// SQLite only: PostgreSQL has no database-wide write lock; the nearest
// thing (a session locking warden's tables) is tests/integration/
// contention_test.cc's.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iostream>

#include "bad_input.h"

namespace bi {
namespace {

using warden::JobState;
using warden::StatusCode;

// A child process (not a thread: the lock is between processes) that takes
// the write lock and holds it until Release(), the test's end, or 120 s.
class LockHolder {
 public:
  explicit LockHolder(const std::string& path) {
    int ready[2], release[2];
    if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(release, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      // Only sqlite, read, write and _exit here: never back into the test.
      close(ready[0]);
      close(release[1]);  // else our own copy would keep read() from seeing EOF
      alarm(120);
      sqlite3* db = nullptr;
      int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
      if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(db, 10'000);
        rc = sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr);
      }
      const char state = rc == SQLITE_OK ? 'H' : 'F';
      (void)!write(ready[1], &state, 1);
      char byte;
      if (rc == SQLITE_OK) (void)!read(release[0], &byte, 1);  // EOF on release
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      sqlite3_close(db);
      _exit(rc == SQLITE_OK ? 0 : 1);
    }
    close(ready[1]);
    close(release[0]);
    release_fd_ = release[1];
    char state = 0;
    held_ = pid_ > 0 && read(ready[0], &state, 1) == 1 && state == 'H';
    close(ready[0]);
  }
  ~LockHolder() { Release(); }
  bool held() const { return held_; }
  void Release() {
    if (release_fd_ >= 0) close(release_fd_);
    release_fd_ = -1;
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int release_fd_ = -1;
  bool held_ = false;
};

class LockedTest : public BadInputTest {};

TEST_P(LockedTest, WriteLockHeldPastTheBusyTimeout) {
  // Leases far longer than the lock: the worker has no reason to stop its
  // jobs, it only waits.
  wt::Worker& a = StartWorker("a", FastFlags({{"--lease", "60s"}, {"--heartbeat", "1s"},
                                             {"--keepalive-threshold", "60s"}}));
  std::vector<int64_t> ids;
  for (int i = 0; i < 8; ++i) ids.push_back(Add(Job("log start; sleep 0.2; log end")));
  ASSERT_TRUE(wt::WaitFor([&] { return !LedgerFor(ids[0], "start").empty(); }));

  LockHolder lock(db());
  ASSERT_TRUE(lock.held());
  // A writer waits out the busy timeout, then says why.
  const wt::SteadyTime start = std::chrono::steady_clock::now();
  CliResult add = Warden(db(), {"add", "t"});
  const int64_t waited = wt::MillisSince(start);
  std::cout << "[ measure  ] `warden add` gave up after " << waited << " ms\n";
  EXPECT_EQ(add.exit_code, 1) << add.err;
  EXPECT_TRUE(OneLineError(
      add, "sqlite: database is locked (another process holds the database lock)"));
  EXPECT_GE(waited, 4500) << "gave up before the 5 s busy timeout";
  // Readers do not need the lock.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"stats"}, {"jobs"}, {"jobs", "show", std::to_string(ids[0])}, {"init"}}) {
    const wt::SteadyTime t = std::chrono::steady_clock::now();
    CliResult r = Warden(db(), args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    EXPECT_LT(wt::MillisSince(t), 4000) << args[0] << " waited for the lock";
  }
  // The API with a short busy timeout.
  auto c = warden::Client::Open(db(), Millis(200));
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  warden::JobSpec s;
  s.task = "t";
  auto refused = (*c)->Enqueue(s);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(refused.error().transient());
  EXPECT_EQ((*c)->CheckWritable().code(), StatusCode::kUnavailable);
  // The worker meets it too (its heartbeat gives up after 5 s) and retries.
  EXPECT_TRUE(wt::WaitFor([&] { return a.LogHas("database is locked"); })) << a.Log();
  lock.Release();

  ASSERT_TRUE(wt::WaitFor([&] {
    for (int64_t id : ids) {
      if (!JobInState(id, JobState::kSucceeded)) return false;
    }
    return true;
  }, Millis(60'000)));
  for (int64_t id : ids) EXPECT_EQ(LedgerFor(id, "end").size(), 1u) << "job " << id;
  EXPECT_FALSE(a.proc->Exited()) << a.Log();
  auto all = client().ListJobs(warden::JobFilter{});
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), ids.size()) << "the refused enqueues left nothing behind";
}

INSTANTIATE_TEST_SUITE_P(Backends, LockedTest, ::testing::Values(wt::Backend::kSqlite),
                         wt::BackendName);

}  // namespace
}  // namespace bi
