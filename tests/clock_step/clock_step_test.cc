// Wall-clock steps (issue 21), with real processes on both backends. NTP
// corrections and VM resumes step the wall clock; only elapsed time on a
// monotonic clock may presume a worker dead (docs/design.md, "Time").
// Proves, for steps of two hours either way:
//  - on a worker host (SQLite: also the database host, one file; PostgreSQL:
//    only the workers' clocks) and on the PostgreSQL server's host, a live,
//    heartbeating worker is never declared dead, keeps its id and its
//    leases (the tokens never change), and every job, at-most-once ones
//    included, succeeds in its one attempt;
//  - a step either way (of the one host on SQLite, of the server's host on
//    PostgreSQL) hides no real death: the job of a worker frozen before the
//    step, or after it, is recovered within lease + 2 × sweep + 2 s of the
//    freeze (the bound of docs/guarantees.md, "Recovery guarantees and
//    their bounds", and a margin), and a SIGKILLed worker's (its death is
//    proven on its host, whatever the clock) within sweep + 2 s of the kill.
//
// The clocks step by libfaketime, preloaded in the processes of the host
// that steps: the wall clock is the real one plus the offset written in one
// file, read again on every call (so a new offset steps all of them at
// once), and CLOCK_MONOTONIC and CLOCK_BOOTTIME are not faked, as with NTP.
// Without libfaketime (scripts/deps.sh installs it) the tests fail under
// CI=true and skip elsewhere. Built in the Release tree only, like the start
// gate test: a preloaded library would come before the sanitizers' runtimes.
#include <glob.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "env/process.h"
#include "harness.h"
#include "run_dir.h"
#include "store/postgres/pg_conn.h"

namespace wt {
namespace {

using warden::JobState;

// FastFlags() (lease 1s, keepalive 1s), with ClockStepTest::Flags().
constexpr Millis kLease{1000};
constexpr Millis kHeartbeat{200};
constexpr Millis kSweep{50};
// How long each step is watched: long enough for a real death to be found
// (the frozen worker's bound, without its margin), so for a wrong judgement
// of silence to act.
constexpr Millis kQuietWindow = 2 * kLease + 2 * kSweep + Millis(300);
// docs/guarantees.md's bound for a frozen worker, + a margin.
constexpr Millis kFrozenBound = kLease + 2 * kSweep + Millis(2000);
constexpr Millis kKilledBound = kSweep + Millis(2000);
// How often a quiet window checks that nothing was disturbed (each check
// runs the CLI once per worker and job).
constexpr Millis kDisturbedEvery{100};

// The thread-safe build: a worker reads its clock from many threads, and the
// plain one parses the clock file into shared state unlocked.
std::optional<std::string> FaketimeLibrary() {
  for (const char* pattern :
       {"/usr/lib/*/faketime/libfaketimeMT.so.1", "/usr/lib/faketime/libfaketimeMT.so.1",
        "/usr/local/lib/faketime/libfaketimeMT.so.1"}) {
    glob_t g{};
    std::optional<std::string> found;
    if (glob(pattern, 0, nullptr, &g) == 0 && g.gl_pathc > 0) found = g.gl_pathv[0];
    globfree(&g);
    if (found) return found;
  }
  return std::nullopt;
}

int64_t RealNowMs() {
  return std::chrono::duration_cast<Millis>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A command job that runs until the test creates `release`.
std::string HoldUntil(const std::string& release) {
  return "log start; while [ ! -e '" + release + "' ]; do sleep 0.05; done; log done";
}

// The files of a run: the clock file and, for DatabaseHostStepTest, its
// PostgreSQL cluster; "owner" names the test process, so a run killed
// outright (a ctest timeout) can be cleaned up by the next one.
class ClockStepTest : public IntegrationTest {
 protected:
  // Before IntegrationTest::SetUp().
  void SetUpClock() {
    lib_ = FaketimeLibrary().value_or("");
    if (lib_.empty()) {
      const char* msg = "libfaketime is not installed (scripts/deps.sh installs it)";
      if (warden::testing::InCi()) FAIL() << msg << "; CI=true: this test must run";
      GTEST_SKIP() << msg;
    }
    for (const std::string& dir : warden::testing::SweepOrphanedRuns("warden-clock")) {
      std::cout << "[ clock    ] cleaned up after a run that was killed: " << dir << "\n";
    }
    // Readable by the PostgreSQL server (the postgres user, when we are
    // root): it reads the clock file too.
    std::string error;
    run_dir_ = warden::testing::MakeRunDir("warden-clock", &error);
    ASSERT_FALSE(run_dir_.empty()) << error;
    clock_file_ = run_dir_ + "/clock";
    WriteOffset("+0");
  }

  void TearDown() override {
    server_.reset();
    IntegrationTest::TearDown();
    if (run_dir_.empty()) return;
    if (cluster_started_) {
      const warden::testing::CmdResult r =
          warden::testing::RunPgCluster("stop", run_dir_ + "/pg", run_dir_ + "/stop");
      if (r.exit_code != 0) {
        std::cerr << "[ clock    ] pg-cluster.sh stop: " << r.Describe() << "\n";
      }
    }
    warden::testing::RemoveOwner(run_dir_);
    RemoveStaleFaketimeFiles();
    if (HasFailure()) {
      std::cerr << "[ clock    ] kept " << run_dir_ << " (clock file, PostgreSQL log)\n";
    } else {
      std::error_code ec;
      std::filesystem::remove_all(run_dir_, ec);
    }
  }

  // Prefix a command with this to run it on the host whose clock steps.
  std::vector<std::string> OnSteppingHost() const {
    return {"/usr/bin/env", "LD_PRELOAD=" + lib_, "FAKETIME_TIMESTAMP_FILE=" + clock_file_,
            "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1",
            "DONT_FAKE_MONOTONIC=1",  // older releases' name
            // A real step leaves the times of existing files alone.
            "NO_FAKE_STAT=1"};
  }

  // The PostgreSQL server for DatabaseHostStepTest: a private cluster whose
  // processes all run on the stepping host. Call before
  // IntegrationTest::SetUp() (it makes us a child subreaper, and the server
  // must not be one of our descendants, which TearDown kills).
  void StartSteppingServer() {
    WARDEN_REQUIRE_PG();  // skip or fail as every PostgreSQL test does
    prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
    cluster_started_ = true;  // stop even a half-started server
    const warden::testing::CmdResult r = warden::testing::RunPgCluster(
        "start", run_dir_ + "/pg", run_dir_ + "/start", OnSteppingHost());
    ASSERT_EQ(r.exit_code, 0) << "pg-cluster.sh start: " << r.Describe();
    std::string url = r.out.substr(0, r.out.find('\n'));
    auto conn = warden::pg::Conn::Connect(url);
    ASSERT_TRUE(conn.has_value()) << conn.error().ToString();
    server_ = std::move(*conn);
    UsePostgresServer(url);
  }

  // Steps the wall clock of every process on the stepping host to real
  // time + `offset` ("+2h", "+0", "-2h"), and checks that they see it.
  void StepClock(const std::string& offset, int64_t offset_s) {
    WriteOffset(offset);
    const int64_t want = RealNowMs() / 1000 + offset_s;
    std::vector<std::string> argv = OnSteppingHost();
    argv.insert(argv.end(), {"/bin/date", "+%s"});
    CliResult r = RunToExit(argv, run_dir_ + "/date", Millis(10'000));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const int64_t seen = std::atoll(r.out.c_str());
    ASSERT_LT(std::llabs(seen - want), 5) << "libfaketime did not step `date` to " << offset
                                          << ": it says " << r.out;
    if (server_) {
      auto rows = server_->Exec("SELECT extract(epoch FROM clock_timestamp())::bigint");
      ASSERT_TRUE(rows.has_value()) << rows.error().ToString();
      ASSERT_LT(std::llabs(rows->Int(0, 0) - want), 5)
          << "the PostgreSQL server's clock did not step to " << offset;
    }
    std::cout << "[ clock    ] wall clock stepped to " << offset << "\n";
  }

  Worker& StartSteppingWorker(const std::string& name, int concurrency) {
    return StartWorker(name, Flags(), concurrency, true,
                       steps_workers_ ? OnSteppingHost() : std::vector<std::string>{});
  }

  // Heartbeats four sweeps apart: were silence judged by comparing wall-clock
  // readings, the first sweep after a forward step would come before both
  // workers' next heartbeats (which would put their rows on the new clock)
  // in all but 1 step in 48, so the failure shows every time.
  static std::vector<std::string> Flags() {
    return FastFlags({{"--heartbeat", std::to_string(kHeartbeat.count()) + "ms"},
                      {"--sweep-interval", std::to_string(kSweep.count()) + "ms"}});
  }

  // A worker that runs one job at a time, holding one that runs until
  // `release`; other workers' slots are full, so the job is its.
  std::pair<Worker*, warden::JobInfo> StartHolder(const std::string& name,
                                                  const std::string& release) {
    Worker& w = StartSteppingWorker(name, 1);
    const int64_t id = Add(Job(HoldUntil(release)));
    EXPECT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); })) << w.Log();
    EXPECT_EQ(HolderPid(id), w.pid());
    auto job = GetJob(id);
    EXPECT_TRUE(job.has_value());
    return {&w, job.value_or(warden::JobInfo{})};
  }

  bool Recovered(const warden::JobInfo& before) {
    auto now = GetJob(before.id);
    return now && (now->state != JobState::kRunning || now->lease_token != before.lease_token);
  }

  // What changed that a clock step must not change: each worker's id,
  // state and log, and each job's lease. Empty if nothing.
  std::string Disturbed(const std::map<Worker*, int64_t>& workers,
                        const std::map<int64_t, warden::JobInfo>& jobs) {
    std::ostringstream out;
    for (const auto& [w, id] : workers) {
      const Json row = WorkerRow(id);
      if (row.value("state", "") != "active") {
        out << "  worker " << w->name << " (id " << id << ") is " << row.value("state", "gone")
            << ": " << row.value("death_reason", Json()).dump() << "\n";
      }
      for (const char* line : {"declared dead", "registered again", "was taken from this worker",
                               "no heartbeat for"}) {
        if (w->LogHas(line)) out << "  worker " << w->name << " logged \"" << line << "...\"\n";
      }
    }
    for (const auto& [id, before] : jobs) {
      if (!Recovered(before)) continue;
      const Json job = Show(id);
      out << "  job " << id << " ("
          << (before.delivery == warden::Delivery::kAtMostOnce ? "at-most-once" : "at-least-once")
          << ") is " << job.value("state", "?") << ", lease token " << before.lease_token << " -> "
          << job.value("lease_token", Json()).dump();
      for (const Json& a : job.value("attempts", Json::array())) {
        out << "; attempt " << a.value("attempt", 0) << " " << a.value("outcome", Json()).dump();
        const Json error = a.value("error", Json());
        if (error.is_object()) out << " (" << error.value("message", "") << ")";
      }
      out << "\n";
    }
    return out.str();
  }

  // Scenarios 1 and 2: live workers, long jobs of both deliveries, and steps
  // of +2h, back to +0 and to -2h, each followed by a quiet window.
  void LiveWorkersRideOutSteps() {
    Worker& a = StartSteppingWorker("a", 2);
    Worker& b = StartSteppingWorker("b", 2);
    std::map<Worker*, int64_t> workers = {{&a, WorkerIdOf(a.pid())}, {&b, WorkerIdOf(b.pid())}};
    for (const auto& [w, id] : workers) ASSERT_GT(id, 0) << w->Log();
    const std::string release = dir() + "/release";
    std::vector<int64_t> ids;
    for (int i = 0; i < 4; ++i) {
      ids.push_back(Add(Job(HoldUntil(release)),
                        i % 2 ? std::vector<std::string>{"--at-most-once"}
                              : std::vector<std::string>{}));
    }
    ASSERT_TRUE(WaitFor([&] {
      for (int64_t id : ids) {
        if (!LedgerHas(id, 1, "start")) return false;
      }
      return true;
    })) << "the jobs did not all start";
    std::map<int64_t, warden::JobInfo> jobs;
    for (int64_t id : ids) {
      auto j = GetJob(id);
      ASSERT_TRUE(j.has_value());
      jobs[id] = *j;
    }

    for (const auto& [offset, seconds] :
         std::vector<std::pair<std::string, int64_t>>{{"+2h", 7200}, {"+0", 0}, {"-2h", -7200}}) {
      ASSERT_NO_FATAL_FAILURE(StepClock(offset, seconds));
      // Watched long enough for any judgement of silence made on the
      // stepped clock to act.
      std::string disturbed;
      ASSERT_TRUE(StaysTrueFor(
          [&] { return (disturbed = Disturbed(workers, jobs)).empty(); }, kQuietWindow,
          kDisturbedEvery))
          << "after the wall clock stepped to " << offset
          << ", live workers or their jobs were disturbed:\n"
          << disturbed;
    }

    { std::ofstream(release) << ""; }
    ASSERT_TRUE(WaitFor([&] {
      for (int64_t id : ids) {
        auto j = GetJob(id);
        if (!j || j->state == JobState::kRunning || j->state == JobState::kAvailable ||
            j->state == JobState::kRetryable) {
          return false;
        }
      }
      return true;
    })) << "the jobs did not finish once released";
    for (int64_t id : ids) {
      const Json job = Show(id);
      EXPECT_NE(job["state"], "dead") << job.dump(2);
      EXPECT_EQ(job["state"], "succeeded") << job.dump(2);
      ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
      EXPECT_EQ(job["attempts"][0]["outcome"], "succeeded") << job.dump(2);
      EXPECT_EQ(job["attempts"][0]["lease_token"], jobs[id].lease_token) << job.dump(2);
      EXPECT_EQ(LedgerFor(id, "start").size(), 1u);
    }
    for (const auto& [w, id] : workers) {
      EXPECT_FALSE(w->proc->Exited()) << w->Log();
      EXPECT_EQ(WorkerIdOf(w->pid()), id) << w->Log();
    }
  }

  // Scenario 3: the clock steps to `offset` while worker d is frozen; then
  // a is frozen and b killed. Each one's job is recovered within its bound,
  // measured from its freeze or its kill.
  void DeathsAreFoundAcrossAStep(const std::string& offset, int64_t offset_s) {
    const std::string release = dir() + "/release";
    const auto [d, d_job] = StartHolder("d", release);
    const auto [a, a_job] = StartHolder("a", release);
    const auto [b, b_job] = StartHolder("b", release);
    ASSERT_FALSE(HasFailure());
    StartSteppingWorker("c", 3);  // idle: runs what the others lose

    ASSERT_TRUE(FreezeBetweenTransactions(*d));
    const SteadyTime d_frozen = std::chrono::steady_clock::now();
    ASSERT_NO_FATAL_FAILURE(StepClock(offset, offset_s));
    // Heartbeats and sweeps run on the stepped clock for a while; the live
    // workers ride it out.
    std::map<Worker*, int64_t> live = {{a, a_job.worker.value_or(-1)},
                                       {b, b_job.worker.value_or(-1)}};
    std::string disturbed;
    ASSERT_TRUE(StaysTrueFor(
        [&] {
          return (disturbed = Disturbed(live, {{a_job.id, a_job}, {b_job.id, b_job}})).empty();
        },
        Millis(500), kDisturbedEvery))
        << "after the wall clock stepped to " << offset
        << ", live workers or their jobs were disturbed:\n"
        << disturbed;

    ASSERT_TRUE(FreezeBetweenTransactions(*a));
    const SteadyTime a_frozen = std::chrono::steady_clock::now();
    std::optional<int64_t> d_ms, a_ms;
    PollUntil(
        [&] {
          if (!d_ms && Recovered(d_job)) d_ms = MillisSince(d_frozen);
          if (!a_ms && Recovered(a_job)) a_ms = MillisSince(a_frozen);
          return d_ms && a_ms;
        },
        kFrozenBound);
    auto ms = [](const std::optional<int64_t>& t) {
      return t ? std::to_string(*t) + " ms" : std::string("never");
    };
    EXPECT_TRUE(d_ms && Millis(*d_ms) <= kFrozenBound)
        << "the job of worker d, frozen before the step to " << offset << ", recovered after: "
        << ms(d_ms) << " (bound " << kFrozenBound.count() << " ms): " << Show(d_job.id).dump();
    EXPECT_TRUE(a_ms && Millis(*a_ms) <= kFrozenBound)
        << "the job of worker a, frozen after the step to " << offset << ", recovered after: "
        << ms(a_ms) << " (bound " << kFrozenBound.count() << " ms): " << Show(a_job.id).dump();

    const SteadyTime b_killed = std::chrono::steady_clock::now();
    b->proc->Kill();
    std::optional<int64_t> b_ms;
    if (PollUntil([&] { return Recovered(b_job); }, kKilledBound)) b_ms = MillisSince(b_killed);
    EXPECT_TRUE(b_ms) << "the job of worker b, killed after the step to " << offset
                      << ", was not recovered within " << kKilledBound.count()
                      << " ms: " << Show(b_job.id).dump();
    std::cout << "[ measure  ] step to " << offset << ": recovered the job of a worker frozen "
              << "before it after " << ms(d_ms) << ", frozen after it after " << ms(a_ms)
              << ", killed after it after " << ms(b_ms) << "\n";
  }

  // Whether workers run on the stepping host (false: only the server does).
  bool steps_workers_ = true;

 private:
  void WriteOffset(const std::string& offset) {
    // Renamed into place: a reader never sees a half-written file.
    const std::string tmp = clock_file_ + ".new";
    { std::ofstream(tmp) << offset << "\n"; }
    ASSERT_EQ(chmod(tmp.c_str(), 0644), 0) << std::strerror(errno);
    ASSERT_EQ(std::rename(tmp.c_str(), clock_file_.c_str()), 0) << std::strerror(errno);
  }

  // libfaketime shares a semaphore and a shared-memory object, named by the
  // pid that made them, with a process's descendants, and removes them only
  // when that process exits normally (not when it execs, as env does, nor
  // when killed). Its README says to delete those of gone processes: the
  // shared memory first, so a process that takes a freed pid meanwhile never
  // finds the semaphore gone but the shared memory still there.
  static void RemoveStaleFaketimeFiles() {
    for (const char* pattern : {"/dev/shm/faketime_shm_*", "/dev/shm/sem.faketime_sem_*"}) {
      glob_t g{};
      if (glob(pattern, 0, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) {
          const std::string path = g.gl_pathv[i];
          const long pid = std::atol(path.c_str() + path.rfind('_') + 1);
          if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
            std::remove(path.c_str());
            if (path.find("faketime_shm_") != std::string::npos) {
              std::remove(("/dev/shm/sem.faketime_sem_" + std::to_string(pid)).c_str());
            }
          }
        }
      }
      globfree(&g);
    }
  }

  std::string lib_, run_dir_, clock_file_;
  bool cluster_started_ = false;
  std::unique_ptr<warden::pg::Conn> server_;  // DatabaseHostStepTest
};

// The workers' host steps. On SQLite that is also the database's host: the
// workers' clocks are the store's.
class WorkerHostStepTest : public ClockStepTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(SetUpClock());
    if (IsSkipped()) return;
    IntegrationTest::SetUp();
  }
};

TEST_P(WorkerHostStepTest, LiveWorkersKeepTheirJobsThroughStepsBothWays) {
  LiveWorkersRideOutSteps();
}

INSTANTIATE_TEST_SUITE_P(Backends, WorkerHostStepTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

// SQLite only: deaths across a step of the workers' host, which is also the
// database's. On PostgreSQL a worker host's clock judges no one (the
// server's times leases and heartbeats, and a death on a host is proven
// without a clock); its server's host is DatabaseHostStepTest's.
class OneHostStepTest : public WorkerHostStepTest {};

TEST_P(OneHostStepTest, DeathsAreFoundInTimeAcrossAForwardStep) {
  DeathsAreFoundAcrossAStep("+2h", 7200);
}

TEST_P(OneHostStepTest, DeathsAreFoundInTimeAcrossABackwardStep) {
  DeathsAreFoundAcrossAStep("-2h", -7200);
}

INSTANTIATE_TEST_SUITE_P(Backends, OneHostStepTest, ::testing::Values(Backend::kSqlite),
                         BackendName);

// PostgreSQL only: its server's clock, on a host of its own, is the store's
// (on SQLite the database's host is the workers', above). The workers'
// clocks do not step.
class DatabaseHostStepTest : public ClockStepTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(SetUpClock());
    if (IsSkipped()) return;
    ASSERT_NO_FATAL_FAILURE(StartSteppingServer());
    if (IsSkipped()) return;
    steps_workers_ = false;
    ASSERT_NO_FATAL_FAILURE(IntegrationTest::SetUp());
    ASSERT_EQ(Cli({"init"}).exit_code, 0);
  }
};

TEST_P(DatabaseHostStepTest, LiveWorkersKeepTheirJobsThroughStepsBothWays) {
  LiveWorkersRideOutSteps();
}

TEST_P(DatabaseHostStepTest, DeathsAreFoundInTimeAcrossAForwardStep) {
  DeathsAreFoundAcrossAStep("+2h", 7200);
}

TEST_P(DatabaseHostStepTest, DeathsAreFoundInTimeAcrossABackwardStep) {
  DeathsAreFoundAcrossAStep("-2h", -7200);
}

INSTANTIATE_TEST_SUITE_P(Backends, DatabaseHostStepTest, ::testing::Values(Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace wt
