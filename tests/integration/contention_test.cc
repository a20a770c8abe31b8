// Many processes on one database: another process holding a lock against
// every writer for seconds loses nothing and crashes no one; three workers
// share 300 jobs with every job run and completed exactly once.
#include <iostream>
#include <map>
#include <set>

#include "database_lock.h"
#include "harness.h"

namespace wt {
namespace {

using warden::JobState;

class ContentionTest : public IntegrationTest {
 protected:
  std::vector<int64_t> EnqueueCommands(const std::string& cmd, int n,
                                       warden::RetryPolicy retry = warden::RetryPolicy::kDefault) {
    std::vector<warden::JobSpec> specs(n);
    for (auto& s : specs) {
      s.task = "command";
      s.command = cmd;
      s.retry = retry;
    }
    return EnqueueMany(specs);
  }

  bool AllSucceeded(const std::vector<int64_t>& ids) {
    auto n = client().CountUnfinished();
    if (!n.has_value() || *n != 0) return false;
    for (int64_t id : ids) {
      if (!JobInState(id, JobState::kSucceeded)) return false;
    }
    return true;
  }

  // Holds a write transaction on the database for `hold` while workers run
  // jobs, enqueues one more job through the CLI meanwhile, and checks that
  // every job succeeds and every worker survives. Returns the job ids.
  std::vector<int64_t> RunWithDatabaseLocked(
      const std::vector<std::string>& flags, Millis hold,
      warden::RetryPolicy retry = warden::RetryPolicy::kDefault) {
    std::vector<Worker*> workers = {&StartWorker("a", flags, 3), &StartWorker("b", flags, 3)};
    std::vector<int64_t> ids = EnqueueCommands(Job("log start; sleep 0.2; log end"), 60, retry);
    EXPECT_EQ(ids.size(), 60u);
    EXPECT_TRUE(WaitFor([&] { return Ledger().size() >= 6; }));

    DatabaseLock lock(backend() == Backend::kPostgres, db(), hold);
    EXPECT_TRUE(lock.WaitHeld());
    // An enqueue meanwhile waits out the lock (up to its 5 s busy timeout or
    // lock_timeout).
    const std::vector<std::string> add = {"add", "--cmd", Job("log start; log end")};
    const SteadyTime start = std::chrono::steady_clock::now();
    CliResult added = Cli(add);
    const int64_t add_ms = MillisSince(start);
    lock.Join();
    std::cout << "[ measure  ] `warden add` waited " << add_ms << " ms for the lock\n";
    EXPECT_GE(add_ms, hold.count() / 2) << "the lock did not hold";
    if (added.exit_code == 1 && (added.err.find("locked") != std::string::npos ||
                                 added.err.find("lock timeout") != std::string::npos)) {
      // Refused, not lost: on a saturated disk the workers' backlog can keep
      // the lock busy past the timeout after the release. Once more.
      std::cout << "[ note     ] add refused after its busy timeout: " << added.err;
      added = Cli(add);
    }
    EXPECT_EQ(added.exit_code, 0) << added.err;
    if (added.json.is_object() && added.json.contains("id")) {
      ids.push_back(added.json["id"].get<int64_t>());
    }

    EXPECT_TRUE(WaitFor([&] { return AllSucceeded(ids); }, Millis(60'000)));
    for (Worker* w : workers) EXPECT_FALSE(w->proc->Exited()) << w->Log();
    for (int64_t id : ids) {
      auto job = GetJob(id);
      EXPECT_TRUE(job && LedgerHas(id, job->attempt, "end")) << "job " << id;
    }
    return ids;
  }
};

TEST_P(ContentionTest, WriteLockHeldForTwoSecondsLosesNothing) {
  // Leases far longer than the lock: it is absorbed without a single retry.
  const auto flags =
      FastFlags({{"--heartbeat", "200ms"}, {"--lease", "20s"}, {"--keepalive-threshold", "20s"}});
  const auto ids = RunWithDatabaseLocked(flags, Millis(2000));
  for (int64_t id : ids) {
    auto job = GetJob(id);
    ASSERT_TRUE(job);
    EXPECT_EQ(job->attempt, 1) << "job " << id << " needed a retry";
    EXPECT_EQ(LedgerFor(id, "start").size(), 1u);
  }
}

TEST_P(ContentionTest, WriteLockLongerThanTheLeaseEndsWithEveryJobSucceeded) {
  // The lock outlasts the 1 s lease: workers self-fence and may be declared
  // dead, jobs are retried, but every one of them still succeeds. How many
  // times a job's worker self-fences depends on how slowly its heartbeats
  // come back after the lock (several seconds under the sanitizers on a
  // loaded machine), and each such loss costs an attempt: the jobs may
  // retry for as long as it takes. None of those losses is a crash: the
  // crash budget once sent three of these healthy jobs to `dead` as
  // crash_loop (issue 37).
  const auto ids = RunWithDatabaseLocked(FastFlags(), Millis(2000), warden::RetryPolicy::kForever);
  int retried = 0;
  for (int64_t id : ids) {
    auto job = GetJob(id);
    ASSERT_TRUE(job);
    if (job->attempt > 1) ++retried;
    EXPECT_EQ(job->crashes, 0) << "job " << id << ": a loss its worker chose is no crash";
    EXPECT_EQ(job->attempts.back().outcome, "succeeded");
    for (size_t i = 0; i + 1 < job->attempts.size(); ++i) {
      EXPECT_EQ(job->attempts[i].outcome, "lost") << "job " << id;
    }
  }
  std::cout << "[ measure  ] " << retried << " of " << ids.size()
            << " jobs were stopped by self-fencing and ran again\n";
}

TEST_P(ContentionTest, OutcomeIsRecordedAfterALockLongerThanTheBusyTimeout) {
  // The job ends while another process holds the write lock past the
  // store's 5 s busy timeout (PostgreSQL: lock_timeout) and past the job's
  // 2 s lease, so recording its outcome fails at first. The worker must
  // keep trying: once the lock
  // is gone its heartbeats extend the job's lease again, so an outcome given
  // up would leave the job `running` for good. (A 30 s sweep interval keeps
  // the sweeper from rescuing the job in between.)
  Worker& w = StartWorker(
      "w", FastFlags(
               {{"--lease", "2s"}, {"--keepalive-threshold", "30s"}, {"--sweep-interval", "30s"}}));
  const int64_t id = Add(Job("log start; sleep 0.3; log end"));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); }));
  DatabaseLock lock(backend() == Backend::kPostgres, db(), Millis(6500));
  ASSERT_TRUE(lock.WaitHeld());
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "end"); }));
  lock.Join();
  const SteadyTime released = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); })) << w.Log();
  std::cout << "[ measure  ] outcome recorded " << MillisSince(released)
            << " ms after the lock was released\n";
  if (!w.LogHas("outcomes failed")) {
    std::cout << "[ note     ] the first write outlasted the lock; the retry path was not hit\n";
  }
  auto job = GetJob(id);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->attempt, 1);
  EXPECT_EQ(LedgerFor(id, "start").size(), 1u);
  EXPECT_FALSE(w.proc->Exited());
}

TEST_P(ContentionTest, ThreeWorkersRunThreeHundredJobsExactlyOnce) {
  // Long leases: a starved heartbeat on a saturated disk must not turn into
  // a retry here (that is the lock tests' subject).
  const auto flags =
      FastFlags({{"--heartbeat", "200ms"}, {"--lease", "30s"}, {"--keepalive-threshold", "30s"}});
  std::vector<Worker*> workers;
  for (const char* name : {"a", "b", "c"}) workers.push_back(&StartWorker(name, flags, 4));
  const SteadyTime start = std::chrono::steady_clock::now();
  const std::vector<int64_t> ids = EnqueueCommands(Job("log run $$"), 300);
  ASSERT_EQ(ids.size(), 300u);
  ASSERT_TRUE(WaitFor([&] { return AllSucceeded(ids); }, Millis(120'000)));
  std::cout << "[ measure  ] 300 jobs on 3 workers in " << MillisSince(start) << " ms\n";

  std::map<int64_t, int> runs;
  std::set<std::pair<int64_t, int>> attempts;
  for (const LedgerLine& l : Ledger()) {
    ++runs[l.job];
    EXPECT_TRUE(attempts.insert({l.job, l.attempt}).second)
        << "job " << l.job << " attempt " << l.attempt << " ran twice";
  }
  std::map<int64_t, int> per_worker;
  for (int64_t id : ids) {
    EXPECT_EQ(runs[id], 1) << "job " << id;
    auto job = GetJob(id);
    ASSERT_TRUE(job);
    EXPECT_EQ(job->attempt, 1);
    ASSERT_EQ(job->attempts.size(), 1u);
    EXPECT_EQ(job->attempts[0].outcome, "succeeded");
    ASSERT_TRUE(job->worker);
    EXPECT_EQ(job->attempts[0].worker, *job->worker);
    ++per_worker[*job->worker];
  }
  std::cout << "[ measure  ] jobs per worker:";
  for (const auto& [w, n] : per_worker) std::cout << " " << w << "=" << n;
  std::cout << "\n";
  const Json stats = Stats();
  EXPECT_EQ(stats["jobs"]["succeeded"], 300);
  EXPECT_EQ(stats["recovery"]["fenced_writes"], 0);
  EXPECT_EQ(stats["recovery"]["rescued_attempts"], 0);
  for (Worker* w : workers) EXPECT_FALSE(w->proc->Exited()) << w->Log();
}

INSTANTIATE_TEST_SUITE_P(Backends, ContentionTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
