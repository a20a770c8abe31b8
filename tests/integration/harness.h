// Integration harness: drives the real `warden` binary as child processes.
//
// Every test gets a fresh directory (mkdtemp) holding its SQLite file, a
// ledger the jobs append to, and one stderr log per spawned process. Workers
// are started with explicit argv (fork + execve, no shell); conditions are
// polled against a deadline, never slept for. The test process makes itself
// a child subreaper, so every process a worker leaves behind (shims, jobs,
// their background children) is re-parented to it and TearDown can find and
// SIGKILL all of them.
//
//   class MyTest : public wt::IntegrationTest {};
//   TEST_F(MyTest, Recovers) {
//     wt::Worker& a = StartWorker("a");
//     int64_t id = Add(Job("log start; sleep 30"));
//     ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); }));
//     a.proc->Kill();
//   }
//
// Thread safety: none; one test thread drives everything.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "child_process.h"
#include "warden/client.h"

namespace wt {

using Json = nlohmann::json;

struct CliResult {
  int exit_code = -1;
  std::string out, err;
  Json json;  // parsed stdout (discarded value if not JSON)
};

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

class IntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  const std::string& dir() const { return dir_; }
  const std::string& db() const { return db_; }
  const std::string& ledger_path() const { return ledger_; }

  // The fast recovery settings of the test plan (heartbeat 100ms, lease 1s,
  // keepalive 1s, sweep 100ms, kill grace 200ms), with `overrides` (flag ->
  // value) replacing or adding flags.
  static std::vector<std::string> FastFlags(
      const std::vector<std::pair<std::string, std::string>>& overrides = {});
  // Starts `warden worker --allow-cmd --name NAME --concurrency N` plus
  // `flags` (FastFlags() when empty) and waits for its "started as worker"
  // line (unless wait_started is false).
  Worker& StartWorker(const std::string& name, std::vector<std::string> flags = {},
                      int concurrency = 2, bool wait_started = true);
  Worker* WorkerByPid(pid_t pid);

  // `warden --db DB --json ARGS...` (no --json when json=false).
  CliResult Cli(const std::vector<std::string>& args, bool json = true,
                Millis timeout = Millis(60'000));
  // `warden add --cmd CMD FLAGS...`; returns the id, or -1 (test failed).
  int64_t Add(const std::string& cmd, const std::vector<std::string>& flags = {});
  Json Show(int64_t id);  // `jobs show ID --json`
  Json Workers();         // `workers --json`
  Json Stats();           // `stats --json`

  // The public C++ API on the same database (cheap polling).
  warden::Client& client();
  std::optional<warden::JobInfo> GetJob(int64_t id);
  bool JobInState(int64_t id, warden::JobState s);
  // The pid of the worker process that holds job `id` now (-1: none).
  pid_t HolderPid(int64_t id);

  // Whether a write transaction on the database can begin within `timeout`
  // (BEGIN IMMEDIATE, then rolled back).
  bool DatabaseWritable(Millis timeout);
  // SIGSTOPs `w` while it holds no write transaction. SQLite's write lock is
  // a file lock: a process frozen inside a transaction locks every other
  // process out until it runs again (a limit of the SQLite backend, which no
  // sweeper can break). So: stop it, wait until every thread is stopped,
  // check that the database is writable, else SIGCONT and try again.
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
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<warden::Client> client_;
  int cli_seq_ = 0;
};

}  // namespace wt
