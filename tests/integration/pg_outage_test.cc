// PostgreSQL outages and cross-host death detection, with real worker
// processes (docs/postgres.md, "During a database outage" and "Fast death
// detection"; docs/design.md invariants 2, 3, 5, 6):
//   - every session of the test database terminated, repeatedly, mid-job: the
//     worker reconnects and re-locks within the 250 ms confirmation, nothing
//     is rescued, the jobs complete once on attempt 1;
//   - the server stopped and started again (a restart) mid-job, under a lease
//     that covers the outage: jobs keep running, completions made during the
//     outage are retried and land exactly once;
//   - the server down past 3/4 of the lease: the worker stops its own runs
//     while the server is down, the jobs are recovered when it is back and
//     run again, at-most-once ones are not started twice, and the stopped
//     runs' writes change nothing;
//   - a worker SIGKILLed on "another host" (its own UTS namespace, so no pid
//     proof is possible) is proven dead by its released session lock, far
//     sooner than its lease or keepalive threshold;
//   - a live worker whose sessions are cut is not declared dead.
//
// PostgreSQL only: the capability these tests exercise — a database server
// that can restart or drop client connections while workers run, and a
// session lock that the server releases when a worker's connection closes —
// does not exist for SQLite (an embedded file has no server and no session).
// Without a PostgreSQL server (WARDEN_TEST_PG_URL) they fail under CI=true and
// are skipped elsewhere. Tests that stop or restart the server start a
// private cluster of their own (scripts/pg-cluster.sh start), so tests running
// in parallel never see the outage; tests that terminate connections use the
// shared server but only ever terminate sessions of their own database.
//
// Bounds: the workers' settings are chosen so that each bound separates the
// mechanism under test from every slower one (a lease, a keepalive
// threshold), with margins for a loaded 2-core machine under ASan/TSan.
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "harness.h"
#include "notify_socket.h"
#include "run_dir.h"
#include "maintenance/sweeper.h"
#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_schema.h"

namespace wt {
namespace {

using warden::JobState;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kSlow = 2;  // sanitized workers are slower
#else
constexpr int kSlow = 1;
#endif

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// A program's path ("" if none): Child::Spawn execs a path.
std::string FindProgram(const std::string& name) {
  return warden::testing::FindTool(name).value_or("");
}

// "2026-11-21T10:00:00.123Z warden[...] ..." -> ms since the epoch (-1 if the
// line has no such time). The time is looked for just before " warden[": a
// line of warden's may follow unrelated output that did not end its line
// (libpq prints the server's messages to stderr too).
int64_t LogTimeMs(const std::string& line) {
  const size_t at = line.find(" warden[");
  if (at == std::string::npos || at < 24) return -1;
  std::tm tm{};
  int ms = 0;
  if (std::sscanf(line.c_str() + at - 24, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
    return -1;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

// For each log line containing `failed` (the first of a streak), the time
// until the next line containing `restored`: how long that loop was cut off.
std::vector<int64_t> OutageGaps(const std::string& log, const std::string& failed,
                                const std::string& restored) {
  std::vector<int64_t> gaps;
  std::istringstream in(log);
  std::string line;
  int64_t since = -1;
  while (std::getline(in, line)) {
    if (since < 0 && line.find(failed) != std::string::npos) {
      since = LogTimeMs(line);
    } else if (since >= 0 && line.find(restored) != std::string::npos) {
      gaps.push_back(LogTimeMs(line) - since);
      since = -1;
    }
  }
  return gaps;
}

std::string Join(const std::vector<int64_t>& v) {
  std::string out;
  for (int64_t x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
  return out.empty() ? "none" : out;
}

int CountOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) {
    ++n;
  }
  return n;
}

// The local TCP ports of every socket process `pid` has open: its client
// ends of its PostgreSQL connections (pg_stat_activity.client_port).
std::vector<int> TcpPortsOf(pid_t pid) {
  std::set<std::string> inodes;
  const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
  if (DIR* d = opendir(fd_dir.c_str())) {
    while (dirent* e = readdir(d)) {
      char target[128] = {};
      const std::string link = fd_dir + "/" + e->d_name;
      const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      const std::string t(target, static_cast<size_t>(n));
      if (t.rfind("socket:[", 0) == 0) inodes.insert(t.substr(8, t.size() - 9));
    }
    closedir(d);
  }
  std::vector<int> ports;
  for (const char* table : {"tcp", "tcp6"}) {
    std::istringstream in(ReadFile("/proc/" + std::to_string(pid) + "/net/" + table));
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string sl, local, remote, st, queues, timer, retr, uid, timeout, inode;
      if (!(f >> sl >> local >> remote >> st >> queues >> timer >> retr >> uid >> timeout >>
            inode)) {
        continue;
      }
      if (!inodes.count(inode)) continue;
      const size_t colon = local.rfind(':');
      if (colon == std::string::npos) continue;
      ports.push_back(static_cast<int>(std::stol(local.substr(colon + 1), nullptr, 16)));
    }
  }
  return ports;
}

// A job body that first logs "OVERLAP PID" if an earlier run of the same
// job (PID) is still alive (not a zombie) when it starts: two runs at once.
std::string NoOverlap(const std::string& body) {
  return "P=\"$L.$WARDEN_JOB_ID.pid\"; if [ -f \"$P\" ]; then p=$(cat \"$P\"); "
         "s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); "
         "if [ -n \"$s\" ] && [ \"$s\" != Z ]; then log OVERLAP $p; fi; fi; "
         "echo $$ > \"$P\"; " +
         body;
}

// Common helpers: the workers' rows and session locks, and terminating
// sessions of this test's database only.
class PgOutageTest : public IntegrationTest {
 protected:
  // An admin connection to the server db() is on, outside db()'s database
  // when we know one (so it never terminates itself and never shows up as a
  // session of the test database).
  warden::pg::Conn& Admin() {
    if (!admin_) {
      std::string url = admin_url_.empty() ? Env("WARDEN_TEST_PG_URL") : admin_url_;
      auto c = warden::pg::Conn::Connect(url);
      if (!c.has_value()) throw std::runtime_error("admin connection: " + c.error().ToString());
      admin_ = std::move(*c);
    }
    return *admin_;
  }

  // Terminates, all at once, the client sessions of the test database that
  // `where` (SQL over pg_stat_activity, may be "true") selects, then waits
  // until they are gone. (pg_terminate_backend(pid, timeout) would wait for
  // each in turn, 100 ms or more apiece: the cuts would be spread out.)
  // Returns how many were terminated (-1: the query failed).
  int Terminate(const std::string& where, const warden::pg::Params& params = {}) {
    auto r = Admin().Exec(
        "SELECT coalesce(array_agg(pid), '{}') FROM (SELECT pid, pg_terminate_backend(pid) "
        "AS t FROM pg_stat_activity WHERE datname = '" +
            pg_database() +
            "' AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND (" + where +
            ")) s WHERE t",
        params);
    if (!r.has_value()) {
      ADD_FAILURE() << "terminating sessions: " << r.error().ToString();
      return -1;
    }
    const std::string pids = r->Text(0, 0);  // {1,2,3}
    const int n = pids == "{}" ? 0 : CountOf(pids, ",") + 1;
    const bool gone = PollUntil(
        [&] {
          auto left =
              Admin().Exec("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1::int[])",
                           warden::pg::Params().Add(pids));
          return left.has_value() && left->Int(0, 0) == 0;
        },
        Millis(10'000), Millis(1));
    EXPECT_TRUE(gone) << "terminated sessions " << pids << " still there after 10 s";
    return n;
  }

  // The server pid of the session holding worker `id`'s session lock (-1:
  // none holds it).
  int LockHolder(int64_t id) {
    auto r = Admin().Exec(
        "SELECT l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE "
        "l.locktype = 'advisory' AND d.datname = $1 AND l.classid::bigint = $2::bigint AND "
        "l.objid::bigint = $3::bigint AND l.objsubid = 2 AND l.granted",
        warden::pg::Params().Add(pg_database()).Add(warden::pg::kWorkerLockClass).Add(id));
    if (!r.has_value() || r->empty()) return -1;
    return static_cast<int>(r->Int(0, 0));
  }


  // Every ledger line of `event`, over all jobs.
  size_t LedgerCount(const std::vector<int64_t>& ids, const std::string& event) {
    size_t n = 0;
    for (int64_t id : ids) n += LedgerFor(id, event).size();
    return n;
  }
  bool AllInState(const std::vector<int64_t>& ids, JobState s) {
    return std::all_of(ids.begin(), ids.end(), [&](int64_t id) { return JobInState(id, s); });
  }

  // The job succeeded on attempt 1 on `worker`, with exactly one run.
  void ExpectSucceededOnceOnFirstAttempt(int64_t id, int64_t worker) {
    const Json job = Show(id);
    EXPECT_EQ(job["state"], "succeeded") << job.dump(2);
    EXPECT_EQ(job["attempt"], 1) << job.dump(2);
    ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
    EXPECT_EQ(job["attempts"][0]["outcome"], "succeeded");
    EXPECT_EQ(job["attempts"][0]["worker"], worker);
    EXPECT_EQ(LedgerFor(id, "start").size(), 1u) << "job " << id;
    ASSERT_EQ(LedgerFor(id, "done").size(), 1u) << "job " << id;
    EXPECT_EQ(LedgerFor(id, "done")[0].token, job["lease_token"].get<int64_t>());
  }

  std::string admin_url_;  // set by fixtures with a server of their own

 private:
  std::unique_ptr<warden::pg::Conn> admin_;
};

// A private PostgreSQL cluster for the test (scripts/pg-cluster.sh), which
// it may stop, start and restart; stopped and removed in TearDown, whatever
// happened (its server log is copied into the test's directory, which is
// kept when the test fails).
class PgOutageClusterTest : public PgOutageTest {
 protected:
  void SetUp() override {
    WARDEN_REQUIRE_PG();
    const std::string script = warden::testing::PgClusterScript();
    if (access(script.c_str(), X_OK) != 0) {
      if (warden::testing::InCi()) FAIL() << "no cluster script at " << script;
      GTEST_SKIP() << "no scripts/pg-cluster.sh at " << script;
    }
    // As root the server runs as `postgres`, which must get into root_/c:
    // MakeRunDir makes it 0755.
    (void)warden::testing::SweepOrphanedRuns("warden-pgo");  // clusters of killed runs
    std::string error;
    root_ = warden::testing::MakeRunDir("warden-pgo", &error);
    ASSERT_FALSE(root_.empty()) << error;
    cluster_ = root_ + "/c";
    std::string out;
    if (!Script("start", &out)) {
      if (warden::testing::InCi()) FAIL() << "could not start a private PostgreSQL cluster";
      GTEST_SKIP() << "could not start a private PostgreSQL cluster (scripts/pg-cluster.sh "
                      "start; are the server binaries installed?)";
    }
    const std::string url = out.substr(0, out.find('\n'));
    ASSERT_EQ(url.rfind("postgresql://", 0), 0u) << out;
    admin_url_ = url.substr(0, url.rfind('/')) + "/postgres";
    UsePostgresServer(url);
    IntegrationTest::SetUp();
  }

  void TearDown() override {
    // Before the harness kills every descendant of this process: the
    // postmaster may be one (the test process is a child subreaper).
    if (!cluster_.empty()) {
      if (HasFailure() && !dir().empty()) {
        std::error_code ec;
        std::filesystem::copy_file(cluster_ + "/log", dir() + "/postgres.log",
                                   std::filesystem::copy_options::overwrite_existing, ec);
      }
      if (!Script("stop"))
        std::cerr << "[ pg-outage] could not stop the cluster in " << cluster_ << "\n";
    }
    IntegrationTest::TearDown();
    if (!root_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(root_, ec);
    }
  }

  // `pg-cluster.sh ACTION DIR`; its stdout in *out.
  bool Script(const std::string& action, std::string* out = nullptr) {
    const std::string base = root_ + "/script-" + std::to_string(++script_seq_);
    const warden::testing::CmdResult r = warden::testing::RunPgCluster(action, cluster_, base);
    EXPECT_FALSE(r.timed_out) << "pg-cluster.sh " << action << " did not finish in 120 s";
    if (out) *out = r.out;
    if (r.exit_code != 0) {
      std::cerr << "[ pg-outage] pg-cluster.sh " << action << " exited " << r.exit_code << ":\n"
                << r.err;
      return false;
    }
    return true;
  }

 private:
  std::string root_, cluster_;
  int script_seq_ = 0;
};

// ---------------------------------------------------------------------------
// 1. Every session of the test database terminated, three times 300 ms apart,
//    while the worker runs jobs of ~2 s (FastFlags: heartbeat 100ms, lease
//    1s, keepalive 1s, sweep 100ms).
//
//    A cut heartbeat connection is retried after 50 ms, so a heartbeat is
//    missed for ~0.1 s per cut, far from the 750 ms self-fence; the session
//    loop reconnects and re-locks within ~0.2 s (a 100 ms pause after the
//    error + a 50 ms poll + connect), inside the sweepers' 250 ms
//    confirmation, so no sweeper may declare the worker dead. Anything else — a
//    re-registered worker, a rescued attempt, a second run — is a failure.
// ---------------------------------------------------------------------------
TEST_P(PgOutageTest, TerminatedConnectionsMidJobReconnectWithoutRescue) {
  Worker& w = StartWorker("w", FastFlags(), 4);
  const int64_t wid = WorkerIdOf(w.pid());
  ASSERT_GT(wid, 0);
  ASSERT_TRUE(WaitFor([&] { return LockHolder(wid) > 0; })) << "no session lock";

  std::vector<int64_t> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(Add(Job(NoOverlap("log start; sleep 2; log done"))));
  ASSERT_GT(ids.back(), 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerCount(ids, "start") == ids.size(); }));
  // Cut at ~1.3, 1.6, 1.9 s into the jobs: the last cuts meet their
  // completions (the completer's write is retried on a new connection).
  std::this_thread::sleep_for(Millis(1300));

  std::vector<int64_t> relock_ms;
  for (int round = 0; round < 3; ++round) {
    const SteadyTime t0 = std::chrono::steady_clock::now();
    const int old_holder = LockHolder(wid);
    ASSERT_GT(old_holder, 0) << "round " << round << ": worker holds no session lock";
    const SteadyTime cut = std::chrono::steady_clock::now();
    const int n = Terminate("true");
    // First the worker's five connections (claims, heartbeats, maintenance,
    // completions, session), maybe more (CLI, our client); later rounds may
    // find some not reopened yet (each loop reconnects when it next needs
    // its connection).
    EXPECT_GE(n, round == 0 ? 5 : 1) << "round " << round;
    const bool back = PollUntil(
        [&] {
          const int h = LockHolder(wid);
          return h > 0 && h != old_holder;
        },
        Millis(5000), Millis(2));
    relock_ms.push_back(back ? MillisSince(cut) : -1);
    EXPECT_TRUE(back) << "round " << round << ": the session lock did not come back";
    const int64_t spent = MillisSince(t0);
    if (spent < 300) std::this_thread::sleep_for(Millis(300 - spent));  // cuts 300 ms apart
  }
  std::cout << "[ measure  ] " << relock_ms.size()
            << " cuts of every session, 300 ms apart: session lock back after " << Join(relock_ms)
            << " ms (confirmation 250 ms)\n";

  ASSERT_TRUE(WaitFor([&] { return AllInState(ids, JobState::kSucceeded); })) << w.Log();
  const std::string log = w.Log();
  std::cout << "[ measure  ] heartbeats cut off for "
            << Join(OutageGaps(log, "heartbeat failed", "heartbeats work again"))
            << " ms; session for "
            << Join(OutageGaps(log, "worker session failed", "worker session restored"))
            << " ms (from the worker's log)\n";
  for (int64_t id : ids) {
    ExpectSucceededOnceOnFirstAttempt(id, wid);
    EXPECT_TRUE(LedgerFor(id, "OVERLAP").empty()) << "two runs of job " << id << " at once";
  }

  // The same registered worker, never declared dead, nothing rescued.
  const Json ws = Workers();
  ASSERT_EQ(ws.size(), 1u) << ws.dump(2);
  EXPECT_EQ(ws[0]["id"], wid);
  EXPECT_EQ(ws[0]["state"], "active") << ws.dump(2);
  EXPECT_TRUE(ws[0]["death_reason"].is_null()) << ws.dump(2);
  const Json stats = Stats();
  EXPECT_EQ(stats["recovery"]["rescued_attempts"], 0) << stats.dump();
  EXPECT_EQ(stats["recovery"]["fenced_writes"], 0) << stats.dump();
  EXPECT_TRUE(w.LogHas("worker session failed, reconnecting")) << log;
  EXPECT_TRUE(w.LogHas("worker session restored")) << log;
  EXPECT_FALSE(w.LogHas("registered again")) << log;
  EXPECT_FALSE(w.LogHas("stopping job")) << log;
  EXPECT_FALSE(w.LogHas("was taken from this worker")) << log;
  EXPECT_FALSE(w.LogHas(" dead; recovered ")) << log;
  EXPECT_FALSE(w.proc->Exited());

  // New work still runs, on the same worker.
  std::vector<int64_t> after;
  for (int i = 0; i < 2; ++i) after.push_back(Add(Job("log start; log done")));
  ASSERT_GT(after.back(), 0);
  ASSERT_TRUE(WaitFor([&] { return AllInState(after, JobState::kSucceeded); })) << w.Log();
  for (int64_t id : after) ExpectSucceededOnceOnFirstAttempt(id, wid);
}

// ---------------------------------------------------------------------------
// 1b. A worker whose session lock is lost must not start jobs: the others
//    may prove it dead (its lock gone past their 250 ms confirmation) at any
//    moment, and a job started then would run beside its next attempt (the
//    chaos runner's seed 0x86bd5b7096c92cfc: a worker frozen across a cut of
//    its sessions claimed on thawing, and started those jobs just after the
//    store had recovered them). Here the lock is held by the test, so the
//    worker cannot lock again and nobody may declare it dead: the job it
//    claims waits, then runs on its first attempt once the lock is back and
//    a heartbeat vouches for the job again.
// ---------------------------------------------------------------------------
TEST_P(PgOutageTest, AJobWaitsWhileItsWorkersSessionLockIsLost) {
  // A lease much longer than the wait, so the job waits rather than being
  // given up unproven.
  Worker& w = StartWorker("w", FastFlags({{"--lease", "10s"}, {"--keepalive-threshold", "10s"}}));
  const int64_t wid = WorkerIdOf(w.pid());
  ASSERT_GT(wid, 0);
  ASSERT_TRUE(WaitFor([&] { return LockHolder(wid) > 0; })) << "no session lock";
  auto thief = warden::pg::Conn::Connect(db());
  ASSERT_TRUE(thief.has_value()) << thief.error().ToString();
  const auto key = warden::pg::Params().Add(warden::pg::kWorkerLockClass).Add(
      static_cast<int>(wid));
  ASSERT_TRUE(WaitFor([&] {
    const int holder = LockHolder(wid);
    if (holder > 0) Terminate("pid = " + std::to_string(holder));
    auto took = (*thief)->Exec("SELECT pg_try_advisory_lock($1::int, $2::int)", key);
    return took.has_value() && took->Bool(0, 0);
  })) << "could not take the worker's lock from it";

  const int64_t id = Add(Job("log start; log done"));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return Show(id)["state"] == "running"; })) << w.Log();
  // Time passing proves the job does not start: 1.5 s, far past a claim's
  // usual start (milliseconds).
  EXPECT_TRUE(StaysTrueFor([&] { return LedgerFor(id, "start").empty(); }, Millis(1500)))
      << "started while its worker's lock was lost";
  const SteadyTime released = std::chrono::steady_clock::now();
  ASSERT_TRUE((*thief)->Exec("SELECT pg_advisory_unlock($1::int, $2::int)", key).has_value());
  ASSERT_TRUE(WaitFor([&] { return Show(id)["state"] == "succeeded"; })) << w.Log();
  std::cout << "[ measure  ] started " << MillisSince(released)
            << " ms or less after the lock was free again\n";
  ExpectSucceededOnceOnFirstAttempt(id, wid);
  EXPECT_FALSE(w.LogHas("registered again")) << w.Log();
  EXPECT_FALSE(w.LogHas("not started")) << w.Log();
}

// ---------------------------------------------------------------------------
// 2. The server restarted mid-job, with a lease that covers the outage
//    (lease 10s, heartbeat 500ms: the worker would fence itself only after
//    7.5 s without a heartbeat; keepalive threshold 10s so no sweeper presumes
//    it dead either). The jobs end *while the server is down* (they wait for
//    a file the test creates once the server is stopped), so their
//    completions must fail and be retried; then the server starts again.
//    Nothing may be rescued or run twice, and the completions land once.
// ---------------------------------------------------------------------------
TEST_P(PgOutageClusterTest, CompletionsDuringARestartAreRetriedAndLandOnce) {
  Worker& w = StartWorker(
      "w",
      FastFlags({{"--lease", "10s"}, {"--heartbeat", "500ms"}, {"--keepalive-threshold", "10s"}}),
      4);
  const int64_t wid = WorkerIdOf(w.pid());
  ASSERT_GT(wid, 0);
  // ~3 s jobs: 1 s of work, then until the test lets them finish.
  const std::string go = dir() + "/go";
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(Add(Job("log start $$; sleep 1; i=0; while [ ! -e '" + go +
                          "' ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; log done")));
  }
  ASSERT_GT(ids.back(), 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerCount(ids, "start") == ids.size(); }));
  // The scenario, not a wait for a state: the server goes down a second
  // into the jobs.
  std::this_thread::sleep_for(Millis(1000));

  for (int64_t id : ids) ASSERT_TRUE(JobInState(id, JobState::kRunning));  // opens client()
  const SteadyTime down = std::chrono::steady_clock::now();
  ASSERT_TRUE(Script("stop"));
  const int64_t stop_ms = MillisSince(down);
  // The runs go on without the database and finish.
  std::ofstream(go).put('\n');
  ASSERT_TRUE(WaitFor([&] { return LedgerCount(ids, "done") == ids.size(); }));
  // Their outcomes could not be recorded (the completer says so).
  ASSERT_TRUE(WaitFor([&] { return w.LogHas("outcomes failed"); })) << w.Log();
  // Down for ~3 s in all (a few more retries), well inside the 7.5 s the
  // lease allows before the worker would fence itself. (The outage's
  // length: the scenario, not a wait for a state.)
  const int64_t spent = MillisSince(down);
  if (spent < 3000) std::this_thread::sleep_for(Millis(3000 - spent));

  const SteadyTime restart = std::chrono::steady_clock::now();
  ASSERT_TRUE(Script("restart"));  // starts the stopped server, same port
  const int64_t restart_ms = MillisSince(restart);
  const int64_t outage_ms = MillisSince(down);
  const SteadyTime up = std::chrono::steady_clock::now();
  // Jobs enqueued right after the restart.
  std::vector<int64_t> fresh;
  for (int i = 0; i < 2; ++i) fresh.push_back(Add(Job("log start; log done")));
  ASSERT_GT(fresh.back(), 0);
  const int64_t add_ms = MillisSince(up);
  ASSERT_TRUE(WaitFor([&] { return AllInState(ids, JobState::kSucceeded); })) << w.Log();
  const int64_t landed_ms = MillisSince(up);
  ASSERT_TRUE(WaitFor([&] { return LedgerCount(fresh, "done") == fresh.size(); })) << w.Log();
  const int64_t fresh_ms = MillisSince(up);
  const std::string log = w.Log();
  // The completer logs the first failure and the recovery, not each retry.
  size_t failures = 0;
  for (size_t at = log.find("outcomes failed"); at != std::string::npos;
       at = log.find("outcomes failed", at + 1)) {
    ++failures;
  }
  EXPECT_EQ(failures, 1u) << log;
  EXPECT_NE(log.find("recording outcomes works again"), std::string::npos) << log;
  std::cout << "[ measure  ] stop took " << stop_ms << " ms, start " << restart_ms
            << " ms; server down ~" << outage_ms << " ms; after it was up: held completions "
            << "landed in " << landed_ms << " ms, jobs enqueued then ran in " << fresh_ms
            << " ms (enqueue took " << add_ms << " ms); heartbeats cut off "
            << Join(OutageGaps(log, "heartbeat failed", "heartbeats work again")) << " ms\n";
  // A reconnect takes at most the 2 s backoff cap, and the claim loop's own
  // backoff is capped at 2 s; the rest is margin for a loaded machine. Far
  // below the 10 s lease: nothing here may wait for a lease.
  EXPECT_LT(landed_ms, 6000 * kSlow);
  EXPECT_LT(fresh_ms, 6000 * kSlow);

  for (int64_t id : ids) ExpectSucceededOnceOnFirstAttempt(id, wid);
  ASSERT_TRUE(WaitFor([&] { return AllInState(fresh, JobState::kSucceeded); }));
  for (int64_t id : fresh) ExpectSucceededOnceOnFirstAttempt(id, wid);
  const Json ws = Workers();
  ASSERT_EQ(ws.size(), 1u) << ws.dump(2);
  EXPECT_EQ(ws[0]["id"], wid);
  EXPECT_EQ(ws[0]["state"], "active") << ws.dump(2);
  const Json stats = Stats();
  EXPECT_EQ(stats["recovery"]["rescued_attempts"], 0) << stats.dump();
  EXPECT_EQ(stats["recovery"]["fenced_writes"], 0) << stats.dump();
  // The log shows the outage and the reconnect.
  EXPECT_TRUE(w.LogHas("heartbeat failed, retrying")) << log;
  EXPECT_TRUE(w.LogHas("heartbeats work again")) << log;
  EXPECT_TRUE(w.LogHas("worker session restored")) << log;
  EXPECT_FALSE(w.LogHas("stopping job")) << log;
  EXPECT_FALSE(w.LogHas("registered again")) << log;
  EXPECT_FALSE(w.LogHas("dropped")) << log;
  EXPECT_FALSE(w.proc->Exited());
}

// 2b. The same with `pg-cluster.sh restart` in one step while ~3 s jobs run
//     (the restart takes about a second; the jobs' ends may or may not fall
//     into it): they run on and are recorded once, nothing is rescued.
TEST_P(PgOutageClusterTest, RestartWhileJobsRunChangesNothing) {
  Worker& w = StartWorker(
      "w",
      FastFlags({{"--lease", "10s"}, {"--heartbeat", "500ms"}, {"--keepalive-threshold", "10s"}}),
      4);
  const int64_t wid = WorkerIdOf(w.pid());
  ASSERT_GT(wid, 0);
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(Add(Job("log start; sleep 3; log done")));
  ASSERT_GT(ids.back(), 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerCount(ids, "start") == ids.size(); }));
  const SteadyTime t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(Millis(1500));  // the scenario: restart 1.5 s into the jobs
  ASSERT_TRUE(Script("restart"));
  const int64_t restart_ms = MillisSince(t0) - 1500;
  const SteadyTime up = std::chrono::steady_clock::now();
  const int64_t fresh = Add(Job("log start; log done"));
  ASSERT_GT(fresh, 0);
  ASSERT_TRUE(WaitFor([&] { return AllInState(ids, JobState::kSucceeded); })) << w.Log();
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(fresh, 1, "done"); })) << w.Log();
  const int64_t fresh_ms = MillisSince(up);
  std::cout << "[ measure  ] restart took " << restart_ms << " ms; a job enqueued after it ran in "
            << fresh_ms << " ms\n";
  EXPECT_LT(fresh_ms, 6000 * kSlow);
  for (int64_t id : ids) ExpectSucceededOnceOnFirstAttempt(id, wid);
  ASSERT_TRUE(WaitFor([&] { return JobInState(fresh, JobState::kSucceeded); }));
  ExpectSucceededOnceOnFirstAttempt(fresh, wid);
  const Json ws = Workers();
  ASSERT_EQ(ws.size(), 1u) << ws.dump(2);
  EXPECT_EQ(ws[0]["state"], "active") << ws.dump(2);
  EXPECT_EQ(Stats()["recovery"]["rescued_attempts"], 0);
  EXPECT_TRUE(w.LogHas("worker session restored")) << w.Log();
  EXPECT_FALSE(w.LogHas("stopping job")) << w.Log();
}

// ---------------------------------------------------------------------------
// 3. The server down for ~3 s under lease 1s (FastFlags: heartbeat 100ms,
//    keepalive 1s, sweep 100ms). The worker fences itself 750 ms after the
//    start of its last successful heartbeat (SelfFenceAfter(1s, 100ms)),
//    i.e. within ~0.9 s of the stop: its runs must be gone while the server
//    is still down. When the server is back the leases have long expired:
//    the jobs are recovered and run again (attempt 2) — by the same process,
//    possibly re-registered (its own sweeper may presume it dead first,
//    since it missed heartbeats for longer than the 1 s keepalive). An
//    at-most-once job that had started ends `dead` and is never started
//    again. Whatever the stopped runs would write is fenced: attempt 1
//    records `lost`, never success, and the final lease token is attempt 2's.
// ---------------------------------------------------------------------------
TEST_P(PgOutageClusterTest, OutagePastTheLeaseSelfFencesThenRecoversOnce) {
  Worker& w = StartWorker("w", FastFlags(), 4);
  const std::string first_hangs =
      "log start $$; if [ \"$WARDEN_ATTEMPT\" = 1 ]; then sleep 60; fi; "
      "echo \"result {\\\"attempt\\\":$WARDEN_ATTEMPT}\" >&3; log done";
  std::vector<int64_t> ids;
  for (int i = 0; i < 2; ++i) ids.push_back(Add(Job(first_hangs)));
  const int64_t amo = Add(Job("log start $$; sleep 60; log done"), {"--at-most-once"});
  ASSERT_GT(amo, 0);
  ASSERT_TRUE(
      WaitFor([&] { return LedgerCount(ids, "start") == 2 && LedgerHas(amo, 1, "start"); }));
  std::vector<ProcId> runs;
  for (int64_t id : ids) runs.push_back(ProcOf(LedgerFor(id, "start").at(0)));
  runs.push_back(ProcOf(LedgerFor(amo, "start").at(0)));
  for (const ProcId& p : runs) ASSERT_FALSE(Gone(p));

  const SteadyTime down = std::chrono::steady_clock::now();
  ASSERT_TRUE(Script("stop"));
  const int64_t stop_ms = MillisSince(down);
  // Self-fencing, with the server still down.
  ASSERT_TRUE(WaitFor([&] {
    return std::all_of(runs.begin(), runs.end(), [](const ProcId& p) { return Gone(p); });
  })) << w.Log();
  const int64_t fenced_ms = MillisSince(down);
  EXPECT_TRUE(w.LogHas("no heartbeat for")) << w.Log();
  EXPECT_EQ(CountOf(w.Log(), "before its lease can pass to another worker"), 3) << w.Log();
  // lease 1s: 750 ms after the last heartbeat's start, plus the watchdog's
  // 50 ms tick and the kill; the stop itself is part of the window.
  EXPECT_LT(fenced_ms, stop_ms + 1000 + 1000 * kSlow);
  // Down for ~3 s in all: three leases, and nothing runs again meanwhile.
  const int64_t spent = MillisSince(down);
  EXPECT_TRUE(StaysTrueFor(
      [&] {
        return std::none_of(ids.begin(), ids.end(),
                            [&](int64_t id) { return LedgerHas(id, 2, "start"); });
      },
      Millis(std::max<int64_t>(0, 3000 - spent))))
      << "a job ran again while the server was down";

  const SteadyTime restart = std::chrono::steady_clock::now();
  ASSERT_TRUE(Script("restart"));  // starts the stopped server, same port
  const int64_t restart_ms = MillisSince(restart);
  const int64_t outage_ms = MillisSince(down);
  const SteadyTime up = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] {
    return std::all_of(ids.begin(), ids.end(),
                       [&](int64_t id) { return LedgerHas(id, 2, "start"); });
  })) << w.Log();
  const int64_t rerun_ms = MillisSince(up);
  ASSERT_TRUE(WaitFor([&] { return AllInState(ids, JobState::kSucceeded); })) << w.Log();
  ASSERT_TRUE(WaitFor([&] { return JobInState(amo, JobState::kDead); })) << w.Log();
  const Json stats = Stats();
  std::cout << "[ measure  ] stop took " << stop_ms << " ms; runs self-fenced " << fenced_ms
            << " ms after the stop began; server down " << outage_ms << " ms (start " << restart_ms
            << " ms); attempt 2 of every job running " << rerun_ms
            << " ms after the server was up; fenced writes " << stats["recovery"]["fenced_writes"]
            << "\n";
  // Reconnect (backoff capped at 2 s) + a sweep + the claim loop's backoff
  // (capped at 2 s) + a margin for a loaded machine.
  EXPECT_LT(rerun_ms, 6000 * kSlow);

  for (int64_t id : ids) {
    const Json job = Show(id);
    EXPECT_EQ(job["state"], "succeeded") << job.dump(2);
    EXPECT_EQ(job["attempt"], 2) << job.dump(2);
    EXPECT_EQ(job["result"], (Json{{"attempt", 2}})) << job.dump(2);
    ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
    EXPECT_EQ(job["attempts"][0]["outcome"], "lost") << job.dump(2);
    EXPECT_EQ(job["attempts"][1]["outcome"], "succeeded") << job.dump(2);
    // The stopped run's token is no longer current: the job's token is the
    // second attempt's, and only that attempt finished (ledger).
    EXPECT_NE(job["attempts"][0]["lease_token"], job["lease_token"]) << job.dump(2);
    EXPECT_EQ(job["attempts"][1]["lease_token"], job["lease_token"]) << job.dump(2);
    EXPECT_EQ(LedgerFor(id, "start").size(), 2u);
    ASSERT_EQ(LedgerFor(id, "done").size(), 1u);
    EXPECT_EQ(LedgerFor(id, "done")[0].attempt, 2);
    EXPECT_EQ(LedgerFor(id, "done")[0].token, job["lease_token"].get<int64_t>());
  }
  // At most once: started once, lost while started, so dead and never again.
  const Json a = Show(amo);
  EXPECT_EQ(a["state"], "dead") << a.dump(2);
  EXPECT_EQ(a["last_error"], "lost") << a.dump(2);
  ASSERT_EQ(a["attempts"].size(), 1u) << a.dump(2);
  EXPECT_EQ(a["attempts"][0]["outcome"], "lost") << a.dump(2);
  EXPECT_EQ(LedgerFor(amo, "start").size(), 1u);
  EXPECT_TRUE(LedgerFor(amo, "done").empty());
  // Three attempts lost (two retried, one dead), none succeeded twice.
  EXPECT_EQ(stats["recovery"]["rescued_attempts"], 3) << stats.dump();
  EXPECT_EQ(stats["jobs"].value("succeeded", 0), 2) << stats.dump();
  EXPECT_FALSE(w.proc->Exited());
  ASSERT_TRUE(WaitFor([&] { return WorkerIdOf(w.pid()) > 0; })) << w.Log();

  const int64_t after = Add(Job("log start; log done"));
  ASSERT_TRUE(WaitFor([&] { return JobInState(after, JobState::kSucceeded); })) << w.Log();
}

// ---------------------------------------------------------------------------
// 6. A worker started while the server is down, as a supervisor or the chaos
//    runner restarts one in the middle of a database restart: it says so,
//    waits (--start-timeout, 30 s by default), starts when the server is
//    back, and runs jobs; nothing about it is recorded before it registers.
//    Without the wait it exited 1 at once ("cannot connect to PostgreSQL").
// ---------------------------------------------------------------------------
TEST_P(PgOutageClusterTest, WorkerStartedWhileTheServerIsDownWaitsForIt) {
  ASSERT_TRUE(Script("stop"));
  Worker& w = StartWorker("w", FastFlags(), 2, /*wait_started=*/false);
  ASSERT_TRUE(WaitFor([&] { return w.LogHas("cannot start yet, retrying for up to 30s"); },
                      Millis(15'000)))
      << w.Log();
  std::this_thread::sleep_for(Millis(1000));  // a few retries while the server is down
  ASSERT_FALSE(w.proc->Exited()) << w.Log();
  ASSERT_TRUE(Script("restart"));
  ASSERT_TRUE(WaitFor([&] { return w.LogHas("started as worker"); }, Millis(20'000)))
      << w.Log();
  EXPECT_TRUE(w.LogHas("the database answers again")) << w.Log();
  const int64_t wid = WorkerIdOf(w.pid());
  ASSERT_GT(wid, 0) << w.Log();
  const int64_t id = Add(Job("log start; log done"));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); })) << w.Log();
  ExpectSucceededOnceOnFirstAttempt(id, wid);
  EXPECT_EQ(Workers().size(), 1u) << Workers().dump(2);
}

// 6b. The same under systemd (a Type=notify unit, deploy/systemd/): no
//    READY=1 while it waits (STATUS= says what for), READY=1 once it has
//    registered; and through a server restart later on, WATCHDOG=1 keeps
//    coming (an outage it waits out is no reason for systemd to restart it).
TEST_P(PgOutageClusterTest, UnderSystemdAWorkerWaitingForTheServerIsNotReadyYet) {
  ASSERT_TRUE(Script("stop"));
  NotifySocket notify(dir() + "/notify");
  Worker& w = StartWorker("w", FastFlags(), 2, /*wait_started=*/false,
                          {"/usr/bin/env", "NOTIFY_SOCKET=" + notify.path(),
                           "WATCHDOG_USEC=1000000", "/bin/sh", "-c",
                           "export WATCHDOG_PID=$$; exec \"$@\"", "sh"});
  ASSERT_TRUE(WaitFor([&] { return w.LogHas("cannot start yet"); }, Millis(15'000))) << w.Log();
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& m : notify.Messages()) {
      if (m.text.find("STATUS=waiting up to 30s for the database") != std::string::npos) {
        return true;
      }
    }
    return false;
  })) << notify.Dump();
  // Watched while the server is down.
  EXPECT_TRUE(StaysTrueFor([&] { return !notify.Has("READY=1"); }, Millis(1000)))
      << notify.Dump();
  ASSERT_TRUE(Script("restart"));
  ASSERT_TRUE(WaitFor([&] { return notify.Has("READY=1"); }, Millis(20'000)))
      << w.Log() << notify.Dump();
  EXPECT_TRUE(w.LogHas("started as worker")) << w.Log();
  EXPECT_GT(WorkerIdOf(w.pid()), 0) << w.Log();

  const SteadyTime down = std::chrono::steady_clock::now();
  ASSERT_TRUE(Script("stop"));
  // A stimulus: the server stays down this long.
  std::this_thread::sleep_for(Millis(2000));
  ASSERT_TRUE(Script("restart"));
  const SteadyTime up = std::chrono::steady_clock::now();
  int pings = 0;
  int64_t gap = 0;
  SteadyTime last = down;
  for (const auto& m : notify.With("WATCHDOG=1")) {
    if (m.at < down || m.at >= up) continue;
    ++pings;
    gap = std::max<int64_t>(
        gap, std::chrono::duration_cast<std::chrono::milliseconds>(m.at - last).count());
    last = m.at;
  }
  EXPECT_GE(pings, 3) << notify.Dump();
  EXPECT_LT(gap, 1500) << notify.Dump();
  ASSERT_FALSE(w.proc->Exited()) << w.Log();
  const int64_t id = Add(Job("log start; log done"));
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); })) << w.Log();
}

// 7. The wait is bounded, and a signal ends it: with --start-timeout 1s the
//    worker exits 1 and says what it waited for; stopped while waiting, it
//    exits 0 at once.
TEST_P(PgOutageClusterTest, WorkerWaitingForTheServerGivesUpOrStopsWhenTold) {
  ASSERT_TRUE(Script("stop"));
  const SteadyTime t0 = std::chrono::steady_clock::now();
  CliResult r = Cli({"worker", "--allow-cmd", "--start-timeout", "1s"}, /*json=*/false,
                    Millis(30'000));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot start yet, retrying for up to 1s"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(still, after retrying for 1s; --start-timeout)"), std::string::npos)
      << r.err;
  EXPECT_LT(MillisSince(t0), 15'000 * kSlow);

  r = Cli({"worker", "--allow-cmd", "--start-timeout", "0s"}, /*json=*/false, Millis(30'000));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.find("retrying"), std::string::npos) << "0s waits for nothing: " << r.err;

  Worker& w = StartWorker("w", FastFlags(), 2, /*wait_started=*/false);
  ASSERT_TRUE(WaitFor([&] { return w.LogHas("cannot start yet"); }, Millis(15'000))) << w.Log();
  const SteadyTime stop = std::chrono::steady_clock::now();
  ASSERT_TRUE(w.proc->Signal(SIGTERM));
  ASSERT_TRUE(w.proc->WaitExit(Millis(10'000))) << w.Log();
  EXPECT_EQ(w.proc->ExitCode(), 0) << w.Log();
  EXPECT_LT(MillisSince(stop), 5'000 * kSlow) << w.Log();
  EXPECT_TRUE(w.LogHas("stopped before it could start")) << w.Log();
}

// ---------------------------------------------------------------------------
// 4, 5. Two workers, as on two hosts: A runs in a UTS namespace of its own
//    with another host name, so no worker can prove A's death from its pid
//    (ProofOfDeath needs the same node); B runs here. Both with lease 30s
//    and keepalive threshold 30s, so neither a lease nor a stale heartbeat
//    can explain anything within seconds: only A's session lock can.
//    Sweep 100ms (FastFlags).
// ---------------------------------------------------------------------------
class PgOutageTwoHostsTest : public PgOutageTest {
 protected:
  static constexpr const char* kOtherHost = "warden-other-host";

  static std::vector<std::string> SlowDeathFlags() {
    return FastFlags({{"--lease", "30s"}, {"--keepalive-threshold", "30s"}});
  }

  // The wrapper that runs a worker as on another host; {} when that is not
  // possible here: then skip_reason_ says why (and under CI=true as root the
  // test has failed).
  std::vector<std::string> OtherHostWrapper() {
    if (geteuid() != 0) {
      Skip(
          "needs root: a worker on \"another host\" runs in its own UTS namespace "
          "(unshare --uts)");
      return {};
    }
    const std::string unshare = FindProgram("unshare");
    const std::string sh = FindProgram("sh");
    if (unshare.empty() || sh.empty()) {
      SkipOrFail("no unshare (util-linux) or sh on PATH");
      return {};
    }
    std::vector<std::string> wrapper = {
        unshare, "--uts", sh, "-c", std::string("hostname ") + kOtherHost + " && exec \"$@\"",
        "sh"};
    // Can this kernel/container make one?
    std::vector<std::string> probe = wrapper;
    probe.push_back(FindProgram("hostname"));
    auto c = Child::Spawn(probe, dir() + "/probe.out", dir() + "/probe.err");
    if (!c->WaitExit(Millis(30'000)) || c->ExitCode() != 0 ||
        c->Stdout().find(kOtherHost) == std::string::npos) {
      SkipOrFail("cannot run a process in a UTS namespace of its own (unshare --uts): " +
                 c->Stderr());
      return {};
    }
    return wrapper;
  }

  void CutLiveWorkersSessions(int cuts);

  // The caller skips with skip_reason_ (unless it failed).
  void Skip(const std::string& why) { skip_reason_ = why; }
  void SkipOrFail(const std::string& why) {
    if (warden::testing::InCi()) ADD_FAILURE() << "CI=true as root, but " << why;
    skip_reason_ = why;
  }
  std::string skip_reason_;
};

TEST_P(PgOutageTwoHostsTest, KilledWorkerOnAnotherHostIsProvenDeadByItsSessionLock) {
  const std::vector<std::string> wrapper = OtherHostWrapper();
  if (wrapper.empty()) {
    if (HasFailure()) return;
    GTEST_SKIP() << skip_reason_;
  }
  Worker& a = StartWorker("a", SlowDeathFlags(), 1, true, wrapper);
  const int64_t aid = WorkerIdOf(a.pid());
  ASSERT_GT(aid, 0);
  const int64_t id = Add(
      Job(NoOverlap("log start $$; if [ \"$WARDEN_ATTEMPT\" = 1 ]; then sleep 60; fi; log done")));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); })) << a.Log();
  ASSERT_EQ(HolderPid(id), a.pid());
  const ProcId run = ProcOf(LedgerFor(id, "start").at(0));
  Worker& b = StartWorker("b", SlowDeathFlags(), 1);
  const int64_t bid = WorkerIdOf(b.pid());
  ASSERT_GT(bid, 0);
  ASSERT_TRUE(WaitFor([&] { return LockHolder(aid) > 0 && LockHolder(bid) > 0; }));

  // A is registered on another node: the pid proof cannot apply to it.
  const Json arow = WorkerRow(aid), brow = WorkerRow(bid);
  const std::string here = warden::DefaultEnv().Host().node;
  EXPECT_EQ(arow["node"], kOtherHost) << arow.dump();
  EXPECT_EQ(brow["node"], here) << brow.dump();
  ASSERT_NE(here, kOtherHost);

  const SteadyTime killed = std::chrono::steady_clock::now();
  a.proc->Kill();
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 2, "start"); }, Millis(25'000))) << b.Log();
  const int64_t rescue_ms = MillisSince(killed);
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); })) << b.Log();
  std::cout << "[ measure  ] A (on " << kOtherHost << ") SIGKILLed; its job running again on B "
            << rescue_ms << " ms later (lease and keepalive 30 s)\n";
  // Sweep (100 ms) + confirmation (250 ms) + NOTIFY/claim + a loaded
  // machine; the lease and keepalive (30 s) are six times further out.
  EXPECT_LT(rescue_ms, 5000);
  EXPECT_TRUE(WaitFor([&] { return Gone(run); }, Millis(5000)));

  // ProofOfDeath could not have been used: for A's row as registered it has
  // no proof, though the same row on this node would be proven at once (A's
  // pid is gone) — only the node name stands in the way.
  warden::WorkerLiveness as_registered;
  as_registered.id = aid;
  as_registered.name = "a";
  as_registered.host = arow["node"].get<std::string>();
  as_registered.boot_id = warden::DefaultEnv().Host().boot_id;
  as_registered.pid_ns = warden::DefaultEnv().Host().pid_ns;
  as_registered.pid = a.pid();
  as_registered.pid_start = 1;  // any: the pid is gone (reaped)
  EXPECT_EQ(warden::ProofOfDeath(as_registered, warden::DefaultEnv()), "");
  warden::WorkerLiveness if_here = as_registered;
  if_here.host = here;
  EXPECT_NE(warden::ProofOfDeath(if_here, warden::DefaultEnv()), "");

  const Json dead = WorkerRow(aid);
  EXPECT_EQ(dead["state"], "dead") << dead.dump();
  const std::string reason =
      dead["death_reason"].is_string() ? dead["death_reason"].get<std::string>() : "";
  EXPECT_NE(reason.find("database session"), std::string::npos) << dead.dump();
  EXPECT_EQ(reason.find("is gone"), std::string::npos) << dead.dump();
  EXPECT_TRUE(b.LogHas("proved 1 worker dead")) << b.Log();

  const Json job = Show(id);
  EXPECT_EQ(job["state"], "succeeded");
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["outcome"], "lost");
  EXPECT_EQ(job["attempts"][0]["worker"], aid);
  EXPECT_NE(job["attempts"][0]["error"]["message"].get<std::string>().find("database session"),
            std::string::npos)
      << job.dump(2);
  EXPECT_EQ(job["attempts"][1]["outcome"], "succeeded");
  EXPECT_EQ(job["attempts"][1]["worker"], bid);
  EXPECT_EQ(LedgerFor(id, "start").size(), 2u);
  EXPECT_EQ(LedgerFor(id, "done").size(), 1u);
  EXPECT_TRUE(LedgerFor(id, "OVERLAP").empty()) << "attempt 2 began while A's run still ran";
  EXPECT_EQ(WorkerRow(bid)["state"], "active");
}

// 5. Only A's sessions cut while A lives and runs a job (B as in 4). A
//    reconnects and re-locks within ~0.2 s, inside the 250 ms confirmation,
//    so neither B nor A's own sweeper may declare A dead or rescue its job
//    — docs/postgres.md, "Fast death detection": a sweeper acts only on a
//    lock still gone 250 ms later, not locked again in between, and a worker
//    whose connection was merely cut reconnects and locks again sooner.
//    Once, and three times 300 ms apart (a flapping connection: A's
//    lock is never gone for more than ~0.2 s at a time, so a sweeper that
//    finds it gone twice 250 ms apart has seen two short absences, not one
//    long one; a failure with "proved 1 worker dead" in B's log and an
//    OVERLAP ledger line is that mistake).
void PgOutageTwoHostsTest::CutLiveWorkersSessions(int cuts) {
  // As on another host where that is possible (then only the session lock
  // could prove A dead); a live process proves nothing from its pid anyway,
  // so without root A runs here.
  std::vector<std::string> wrapper;
  if (geteuid() == 0) {
    wrapper = OtherHostWrapper();
    if (wrapper.empty() && HasFailure()) return;
  }
  Worker& a = StartWorker("a", SlowDeathFlags(), 1, true, wrapper);
  const int64_t aid = WorkerIdOf(a.pid());
  ASSERT_GT(aid, 0);
  const int64_t id = Add(Job(NoOverlap("log start $$; sleep 3; log done")));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); })) << a.Log();
  ASSERT_EQ(HolderPid(id), a.pid());
  Worker& b = StartWorker("b", SlowDeathFlags(), 1);
  const int64_t bid = WorkerIdOf(b.pid());
  ASSERT_GT(bid, 0);
  ASSERT_TRUE(WaitFor([&] { return LockHolder(aid) > 0 && LockHolder(bid) > 0; }));
  const int b_holder = LockHolder(bid);

  std::vector<int64_t> relock_ms;
  for (int round = 0; round < cuts; ++round) {
    const SteadyTime t0 = std::chrono::steady_clock::now();
    const int old_holder = LockHolder(aid);
    ASSERT_GT(old_holder, 0) << "round " << round << ": A holds no session lock";
    std::string ports;  // "1,2,3" (appended piecewise: GCC 12 -Wrestrict)
    for (int p : TcpPortsOf(a.pid())) {
      if (!ports.empty()) ports += ',';
      ports += std::to_string(p);
    }
    ASSERT_FALSE(ports.empty()) << "no TCP connections of A found";
    const SteadyTime cut = std::chrono::steady_clock::now();
    const int n = Terminate("client_port = ANY('{" + ports + "}'::int[])");
    EXPECT_GE(n, round == 0 ? 5 : 1)
        << "round " << round << ": A's connections (ports " << ports << ")";
    const bool back = PollUntil(
        [&] {
          const int h = LockHolder(aid);
          return h > 0 && h != old_holder;
        },
        Millis(5000), Millis(2));
    relock_ms.push_back(back ? MillisSince(cut) : -1);
    EXPECT_TRUE(back) << "round " << round << ": A's session lock did not come back";
    const int64_t spent = MillisSince(t0);
    if (round + 1 < cuts && spent < 300) {
      std::this_thread::sleep_for(Millis(300 - spent));  // cuts 300 ms apart
    }
  }
  std::cout << "[ measure  ] A's sessions cut " << cuts << " time(s): its lock back after "
            << Join(relock_ms) << " ms (confirmation 250 ms)\n";
  EXPECT_EQ(LockHolder(bid), b_holder) << "B's session was touched";

  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); })) << a.Log();
  // Long enough for every sweeper to act on a stale suspicion: several
  // sweeps (100 ms) plus the confirmation.
  Json arow;
  EXPECT_TRUE(StaysTrueFor(
      [&] {
        arow = WorkerRow(aid);
        return arow["state"] == "active" && arow["death_reason"].is_null();
      },
      Millis(1000), Millis(100)))
      << "A was declared dead: " << arow.dump();
  EXPECT_TRUE(LedgerFor(id, "OVERLAP").empty()) << "two runs of the job at once";
  ExpectSucceededOnceOnFirstAttempt(id, aid);
  EXPECT_EQ(Stats()["recovery"]["rescued_attempts"], 0);
  EXPECT_FALSE(b.LogHas(" dead; recovered ")) << b.Log();
  EXPECT_FALSE(a.LogHas(" dead; recovered ")) << a.Log();
  EXPECT_FALSE(a.LogHas("registered again")) << a.Log();
  EXPECT_TRUE(a.LogHas("worker session restored")) << a.Log();
  EXPECT_FALSE(a.proc->Exited());
}

TEST_P(PgOutageTwoHostsTest, LiveWorkerWhoseSessionsAreCutOnceIsNotDeclaredDead) {
  CutLiveWorkersSessions(1);
}

TEST_P(PgOutageTwoHostsTest, LiveWorkerWhoseSessionsAreCutRepeatedlyIsNotDeclaredDead) {
  CutLiveWorkersSessions(3);
}

// PostgreSQL only (see the top of this file).
INSTANTIATE_TEST_SUITE_P(Postgres, PgOutageTest, ::testing::Values(Backend::kPostgres),
                         BackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, PgOutageClusterTest, ::testing::Values(Backend::kPostgres),
                         BackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, PgOutageTwoHostsTest, ::testing::Values(Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace wt
