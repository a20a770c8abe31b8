// Integration harness: drives the real `warden` binary as child processes.
//
// Every test runs once per backend (the fixture's parameter): on SQLite its
// database is a file in the test's directory; on PostgreSQL it is a fresh
// database on the test server (PgTestDb: WARDEN_TEST_PG_URL, set by
// scripts/pg-cluster.sh run), dropped at the end of the test; without a
// server the postgres variants fail under CI=true and are skipped elsewhere.
// db() is what every process gets as `--db`: the file's path or the URL.
// A postgres-only fixture may instead name a server of its own (say a
// private cluster it restarts) with UsePostgresServer(URL) before calling
// IntegrationTest::SetUp(): db() is then that URL, used as is (nothing is
// created or dropped there).
//
// Every test also gets a fresh directory (mkdtemp) holding its SQLite file
// (sqlite only), a ledger the jobs append to, and one stderr log per spawned
// process; it is removed when the test passes and kept (its path printed)
// when it fails. Workers are started with explicit argv (fork + execve, no
// shell; optionally behind a wrapper command that execs the rest, e.g.
// `unshare --uts sh -c '...; exec "$@"' sh`); conditions are polled against
// a deadline, never slept for. The test process makes itself a child
// subreaper, so every process a worker leaves behind (shims, jobs, their
// background children) is re-parented to it and TearDown can find and
// SIGKILL all of them.
//
//   class MyTest : public wt::IntegrationTest {};
//   TEST_P(MyTest, Recovers) {
//     wt::Worker& a = StartWorker("a");
//     int64_t id = Add(Job("log start; sleep 30"));
//     ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); }));
//     a.proc->Kill();
//   }
//   // Names: Backends/MyTest.Recovers/sqlite, Backends/MyTest.Recovers/postgres
//   INSTANTIATE_TEST_SUITE_P(Backends, MyTest, ::testing::ValuesIn(wt::AllBackends()),
//                            wt::BackendName);
//
// A test that is inherently about one backend goes in its own fixture,
// instantiated with ::testing::Values(wt::Backend::kSqlite) (or kPostgres),
// with a comment saying which capability differs.
//
// Thread safety: none; one test thread drives everything.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "child_process.h"
#include "pg_test_db.h"
#include "wait_for.h"
#include "warden/client.h"

namespace wt {

using Json = nlohmann::json;
// The support library's names, as the integration tests spell them.
using proc::AllThreadsStopped;
using proc::ReadFile;
using warden::testing::Child;
using warden::testing::Gone;
using warden::testing::Identify;
using warden::testing::kDeadline;
using warden::testing::Millis;
using warden::testing::MillisSince;
using warden::testing::PollUntil;
using warden::testing::ProcId;
using warden::testing::StaysTrueFor;
using warden::testing::SteadyTime;
using warden::testing::WaitFor;

enum class Backend { kSqlite, kPostgres };
std::vector<Backend> AllBackends();
const char* ToString(Backend b);
// Test-name suffix: "sqlite", "postgres".
std::string BackendName(const ::testing::TestParamInfo<Backend>& info);
inline void PrintTo(Backend b, std::ostream* os) { *os << ToString(b); }

struct CliResult {
  int exit_code = -1;
  std::string out, err;
  Json json;  // parsed stdout (discarded value if not JSON)
};

// Runs `argv` until it exits (killed, and a test failure, after `timeout`),
// with its stdout and stderr through the files `base`.out and `base`.err,
// removed after; stdout is parsed as JSON where it is JSON.
CliResult RunToExit(const std::vector<std::string>& argv, const std::string& base,
                    Millis timeout);
// SIGKILLs every descendant of this process (with the subreaper flag set,
// that is every process a test started, directly or not) until none runs,
// and reaps them; a test failure if some would not die.
void KillAllDescendants();

// One line a job appended to the ledger:
//   JOB_ID ATTEMPT LEASE_TOKEN EVENT [ARGS...]
struct LedgerLine {
  int64_t job = 0;
  int attempt = 0;
  int64_t token = 0;
  std::string event;
  std::vector<std::string> args;
};

// A `warden worker` process.
struct Worker {
  std::string name;
  std::unique_ptr<Child> proc;
  pid_t pid() const { return proc->pid(); }
  std::string Log() const { return proc->Stderr(); }
  bool LogHas(const std::string& text) const;
};

class IntegrationTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;
  void TearDown() override;

  Backend backend() const { return GetParam(); }
  bool postgres() const { return backend() == Backend::kPostgres; }
  const std::string& dir() const { return dir_; }
  // What `--db` names: the SQLite file's path, or the PostgreSQL URL.
  const std::string& db() const { return db_; }
  // PostgreSQL: the name of db()'s database (for pg_stat_activity).
  const std::string& pg_database() const { return pg_database_; }
  // Call before IntegrationTest::SetUp() (postgres only): db() becomes
  // `url`, a database the fixture provides, instead of a fresh database on
  // the test server.
  void UsePostgresServer(const std::string& url) { given_pg_url_ = url; }
  const std::string& ledger_path() const { return ledger_; }

  // The fast recovery settings of the test plan (heartbeat 100ms, lease 1s,
  // keepalive 1s, sweep 100ms, kill grace 200ms), with `overrides` (flag ->
  // value) replacing or adding flags.
  static std::vector<std::string> FastFlags(
      const std::vector<std::pair<std::string, std::string>>& overrides = {});
  // Starts `warden worker --allow-cmd --name NAME --concurrency N` plus
  // `flags` (FastFlags() when empty) and waits for its "started as worker"
  // line (unless wait_started is false). With `wrapper`, runs
  // `wrapper... warden worker ...` instead: wrapper[0] is a program path and
  // the wrapper must exec its arguments (so pid() is the worker's pid).
  Worker& StartWorker(const std::string& name, std::vector<std::string> flags = {},
                      int concurrency = 2, bool wait_started = true,
                      const std::vector<std::string>& wrapper = {});
  // Any worker program (argv[0] its path; the library's Worker, say), with
  // the same log and wait as StartWorker.
  Worker& StartWorkerProcess(const std::string& name, const std::vector<std::string>& argv,
                             bool wait_started = true);
  Worker* WorkerByPid(pid_t pid);

  // `warden --db DB --json ARGS...` (no --json when json=false).
  CliResult Cli(const std::vector<std::string>& args, bool json = true,
                Millis timeout = Millis(60'000));
  // `warden add --cmd CMD FLAGS...`; returns the id, or -1 (test failed).
  int64_t Add(const std::string& cmd, const std::vector<std::string>& flags = {});
  Json Show(int64_t id);  // `jobs show ID --json`
  Json Timeline(int64_t id);  // `jobs timeline ID --json`
  Json Workers();         // `workers --all --json`: every row, dead ones included
  // The live worker id (as in `workers --json`) of a process we started;
  // -1 if none.
  int64_t WorkerIdOf(pid_t pid);
  Json WorkerRow(int64_t id);  // its `workers --json` row; {} if none
  Json Stats();           // `stats --json`

  // The public C++ API on the same database (cheap polling).
  warden::Client& client();
  // client().EnqueueMany: the new ids, in order (none, and a test failure,
  // if it fails).
  std::vector<int64_t> EnqueueMany(const std::vector<warden::JobSpec>& specs);
  std::optional<warden::JobInfo> GetJob(int64_t id);
  bool JobInState(int64_t id, warden::JobState s);
  // The pid of the worker process that holds job `id` now (-1: none).
  pid_t HolderPid(int64_t id);

  // Whether a write transaction on the database can begin within `timeout`
  // and be rolled back. SQLite: BEGIN IMMEDIATE takes the file's write lock.
  // PostgreSQL: Client::CheckWritable. No database-wide write lock exists:
  // this fails only if the server cannot be reached or is read-only, or if
  // another session locks warden's tables against writers for longer than
  // the session's lock_timeout (5 s; `timeout` does not apply).
  bool DatabaseWritable(Millis timeout);
  // SIGSTOPs `w` (and waits until every thread is stopped).
  //  - SQLite: only between write transactions: stop it, check that the
  //    database is writable, else SIGCONT and try again. The write lock is a
  //    file lock: a process frozen inside a write transaction locks every
  //    other process out until it runs again (a limit of the SQLite backend,
  //    which no sweeper can break).
  //  - PostgreSQL: anywhere, mid-transaction included. A frozen transaction
  //    keeps only its own row locks, maintenance skips those rows, and the
  //    server ends the session within 1 s (idle_in_transaction_session_
  //    timeout), so the lease-based bounds hold wherever it froze.
  bool FreezeBetweenTransactions(Worker& w);

  // A job command: defines L (the ledger path) and `log EVENT...`, which
  // appends "JOB ATTEMPT TOKEN EVENT..." to the ledger, then runs `body`.
  std::string Job(const std::string& body) const;
  std::vector<LedgerLine> Ledger() const;
  std::vector<LedgerLine> LedgerFor(int64_t job, const std::string& event) const;
  bool LedgerHas(int64_t job, int attempt, const std::string& event) const;

  // For a ledger line whose first arg is a pid: the process it names (the
  // start time is read now, so call this while it still runs).
  static ProcId ProcOf(const LedgerLine& l, size_t arg = 0);

 private:
  void DumpDiagnostics();
  std::string dir_, db_, ledger_;
  std::string pg_database_, given_pg_url_;
  std::unique_ptr<warden::testing::PgTestDb> pg_db_;  // postgres only
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<warden::Client> client_;
  int cli_seq_ = 0;
};

}  // namespace wt
