// Filters, keyset pages, job delete and bulk operations (warden/bulk.h) on
// every backend: pages stay correct while jobs change, a delete refuses a
// job not finished, and a bulk operation stopped after k batches resumes in
// another store object (another process) at its cursor, doing nothing twice.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "store_fixture.h"

namespace warden::testing {
namespace {

using std::chrono::seconds;

class BulkStoreTest : public StoreTest {
 protected:
  // `n` dead jobs (one attempt each, failed with `message`), oldest first.
  std::vector<JobId> AddDead(int n, const std::string& message = "boom") {
    std::vector<JobId> ids;
    for (int i = 0; i < n; ++i) {
      JobSpec s = Spec();
      s.max_attempts = 1;
      ids.push_back(Add(s));
    }
    Kill(ids, message);
    return ids;
  }
  // Claims the available jobs `ids` and fails them (max_attempts 1: dead).
  void Kill(const std::vector<JobId>& ids, const std::string& message = "boom") {
    const WorkerId w = RegisterWorker("killer-" + std::to_string(++workers_));
    auto claimed = Claim(w, static_cast<int>(ids.size()) + 10);
    std::vector<JobOutcome> fails;
    for (const JobInfo& j : claimed) {
      JobOutcome o;
      o.ref = JobRef{j.id, j.lease_token};
      o.error.message = message;
      fails.push_back(o);
    }
    ASSERT_EQ(fails.size(), ids.size());
    ASSERT_TRUE(store_->JobFinishMany(w, fails).has_value());
  }
  std::vector<JobId> Ids(const JobFilter& f, int64_t* total = nullptr) {
    auto list = store_->JobList(f, total);
    EXPECT_TRUE(list.has_value()) << list.error().ToString();
    std::vector<JobId> ids;
    if (list.has_value()) {
      for (const JobInfo& j : *list) ids.push_back(j.id);
    }
    return ids;
  }
  JobState StateOf(JobId id) { return store_->JobGet(id).value().state; }
  int workers_ = 0;
};

using IdList = std::vector<JobId>;

TEST_P(BulkStoreTest, FiltersByKeysTimesAndText) {
  const IdList dead = AddDead(1, "connection refused by upstream");
  const JobId jd = dead[0];
  const TimeMs d_finished = *store_->JobGet(jd).value().finished_at;
  clock_.Advance(seconds(10));
  JobSpec a = Spec();
  a.unique_key = "u-1";
  a.payload = {{"order", "A-17"}};
  const JobId ja = Add(a);
  clock_.Advance(seconds(10));
  JobSpec b = Spec();
  b.concurrency_key = "k-1";
  b.payload = {{"order", "B-18"}};
  const JobId jb = Add(b);
  const TimeMs b_created = store_->JobGet(jb).value().created_at;

  JobFilter f;
  f.unique_key = "u-1";
  EXPECT_EQ(Ids(f), IdList{ja});
  f = {};
  f.concurrency_key = "k-1";
  EXPECT_EQ(Ids(f), IdList{jb});
  f = {};
  f.created_after = b_created;
  EXPECT_EQ(Ids(f), IdList{jb}) << "after: inclusive";
  f.created_before = b_created;
  EXPECT_EQ(Ids(f), IdList{}) << "before: exclusive";
  f = {};
  f.created_before = b_created;
  EXPECT_EQ(Ids(f), (IdList{ja, jd}));
  f = {};
  f.finished_after = 0;
  EXPECT_EQ(Ids(f), IdList{jd}) << "a finished range leaves out the unfinished";
  f = {};
  f.finished_before = d_finished;
  EXPECT_EQ(Ids(f), IdList{});
  f.finished_before = d_finished + 1;
  EXPECT_EQ(Ids(f), IdList{jd});
  f = {};
  f.search = "B-18";
  EXPECT_EQ(Ids(f), IdList{jb}) << "payload text";
  f.search = "b-18";
  EXPECT_EQ(Ids(f), IdList{}) << "case-sensitive";
  f.search = "refused by";
  EXPECT_EQ(Ids(f), IdList{jd}) << "the last error's message";
  f.states = {JobState::kAvailable};
  int64_t total = -1;
  EXPECT_EQ(Ids(f, &total), IdList{});
  EXPECT_EQ(total, 0);
  f = {};
  f.search = "-1";
  f.states = {JobState::kAvailable, JobState::kDead};
  EXPECT_EQ(Ids(f, &total), (IdList{jb, ja})) << "A-17, B-18 contain -1";
  EXPECT_EQ(total, 2);
}

TEST_P(BulkStoreTest, KeysetPagesShowEachJobOnceWhileJobsChange) {
  std::vector<JobId> ids;
  for (int i = 0; i < 9; ++i) ids.push_back(Add(Spec()));
  JobFilter f;
  f.states = {JobState::kAvailable, JobState::kCancelled};
  f.limit = 3;
  std::vector<JobId> seen;
  int64_t total = 0;
  IdList page = Ids(f, &total);
  EXPECT_EQ(total, 9);
  seen.insert(seen.end(), page.begin(), page.end());
  // Between pages: new jobs arrive (above the cursor: not in this listing),
  // a job on the next page changes state but still matches, one on a later
  // page stops matching, and one already shown changes.
  Add(Spec());
  ASSERT_EQ(store_->JobCancel(ids[5], {}).value(), JobState::kCancelled);
  ASSERT_EQ(store_->JobCancel(ids[8], {}).value(), JobState::kCancelled);
  // The oldest runs: it stops matching before its page is read.
  std::vector<JobInfo> running = Claim(RegisterWorker(), 1);
  ASSERT_EQ(running.size(), 1u);
  ASSERT_EQ(running[0].id, ids[0]);
  const JobId gone = ids[1];
  ASSERT_TRUE(store_->JobCancel(gone, {}).has_value());
  ASSERT_TRUE(store_->JobDelete(gone, AuditEntry{0, 0, "t", "job.delete", "", 0}).ok());
  while (!page.empty()) {
    f.before_id = page.back();
    page = Ids(f, &total);
    seen.insert(seen.end(), page.begin(), page.end());
  }
  EXPECT_EQ(total, 8) << "the count leaves the cursor out: 10 jobs, 1 running, 1 deleted";
  std::vector<JobId> expected;
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    if (*it != gone && *it != ids[0]) expected.push_back(*it);
  }
  EXPECT_EQ(seen, expected) << "each once, newest first, none skipped, the deleted one gone";
}

TEST_P(BulkStoreTest, DeleteTakesOnlyFinishedJobsAndTheirAttempts) {
  const AuditEntry audit{0, 0, "cli:test", "job.delete", "", 0};
  const IdList dead = AddDead(1);
  const JobId waiting = Add(Spec());
  JobSpec later = Spec();
  later.delay = seconds(60);
  const JobId scheduled = Add(later);
  const JobId running = Add(Spec());
  ASSERT_EQ(Claim(RegisterWorker("runner"), 5).size(), 2u);  // `waiting` and `running`
  for (JobId id : {waiting, scheduled, running}) {
    const Status s = store_->JobDelete(id, audit);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << id << ": " << s.ToString();
    EXPECT_TRUE(store_->JobGet(id).has_value()) << "still there";
  }
  EXPECT_EQ(store_->JobDelete(dead[0], audit).code(), StatusCode::kOk);
  EXPECT_EQ(store_->JobGet(dead[0]).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->JobDelete(dead[0], audit).code(), StatusCode::kNotFound);
  auto entries = store_->AuditList(10, 0).value();
  ASSERT_EQ(entries.size(), 1u) << "refusals are not logged";
  EXPECT_EQ(entries[0].action, "job.delete");
  EXPECT_EQ(entries[0].count, 1);
  // Its attempts went with it: a new job's listing shows no stale message.
  JobFilter f;
  f.search = "boom";
  EXPECT_EQ(Ids(f), IdList{});
}

TEST_P(BulkStoreTest, ADryRunCountIsTheOperationsTotal) {
  AddDead(3);
  Add(Spec());
  auto scope = BulkScope(BulkAction::kRetry, JobFilter{});
  ASSERT_TRUE(scope.has_value());
  scope->limit = 1;
  int64_t count = 0;
  ASSERT_TRUE(store_->JobList(*scope, &count).has_value());
  EXPECT_EQ(count, 3);
  auto op = store_->BulkOpCreate(BulkAction::kRetry, JobFilter{}, "cli:test", {});
  ASSERT_TRUE(op.has_value()) << op.error().ToString();
  EXPECT_EQ(op->total, 3);
  EXPECT_EQ(op->state, BulkState::kRunning);
  JobFilter none;
  none.states = {JobState::kRunning};
  EXPECT_EQ(store_->BulkOpCreate(BulkAction::kRetry, none, "x", {}).error().code(),
            StatusCode::kInvalidArgument)
      << "a running job cannot be retried";
  none.states = {JobState::kSucceeded};
  none.queue = "nothing-here";
  auto empty = store_->BulkOpCreate(BulkAction::kDelete, none, "x", {});
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->state, BulkState::kDone) << "nothing in scope: done at once";
}

// The overview's crash-loop count links to the jobs whose last error is
// crash_loop: the filter lists exactly what Stats counts, in the listing,
// its total, and a bulk operation's scope, and the other kinds apart.
TEST_P(BulkStoreTest, TheErrorKindFilterListsWhatTheCrashLoopCountCounts) {
  const IdList failed = AddDead(1);
  IdList looped;
  for (int i = 0; i < 2; ++i) {
    JobSpec s = Spec();
    s.max_crashes = 1;
    s.max_attempts = 10;
    looped.insert(looped.begin(), Add(s));
  }
  const JobId waiting = Add(Spec());
  const WorkerId w = RegisterWorker("crasher");
  for (int i = 0; i < 2; ++i) {
    auto claimed = Claim(w, 1);
    ASSERT_EQ(claimed.size(), 1u);
    ASSERT_NE(claimed[0].id, waiting);
    JobOutcome crash{JobRef{claimed[0].id, claimed[0].lease_token}, false, {}, {}};
    crash.error.kind = ErrorKind::kCrash;
    crash.error.signal = 9;
    ASSERT_TRUE(store_->JobFinishMany(w, std::span(&crash, 1)).has_value());
  }
  const int64_t counted = store_->GetStats().value().crash_loops;
  ASSERT_EQ(counted, 2);
  JobFilter f;
  f.error_kind = ErrorKind::kCrashLoop;
  int64_t total = 0;
  EXPECT_EQ(Ids(f, &total), looped);
  EXPECT_EQ(total, counted);
  f.states = {JobState::kDead};
  EXPECT_EQ(Ids(f), looped);
  f.states = {JobState::kAvailable};
  EXPECT_EQ(Ids(f), IdList{});
  f = {};
  f.error_kind = ErrorKind::kError;
  EXPECT_EQ(Ids(f), failed);
  f.error_kind = ErrorKind::kTimeout;
  EXPECT_EQ(Ids(f, &total), IdList{});
  EXPECT_EQ(total, 0);
  f.error_kind = ErrorKind::kCrashLoop;
  auto op = store_->BulkOpCreate(BulkAction::kDelete, f, "cli:test", {});
  ASSERT_TRUE(op.has_value()) << op.error().ToString();
  EXPECT_EQ(op->total, counted);
}

// The overview's rescued count links to the jobs with a lost attempt:
// Stats::rescued counts attempts, Stats::rescued_jobs the jobs, and the
// filter lists exactly those, however many times each was rescued.
TEST_P(BulkStoreTest, TheRescuedFilterListsWhatTheRescuedJobsCountCounts) {
  const IdList failed = AddDead(1);
  const JobId twice = Add(Spec());
  const JobId once = Add(Spec());
  const JobId never = Add(Spec());
  const WorkerId w = RegisterWorker("loser");
  auto finish = [&](JobId id, bool ok, ErrorKind kind) {
    auto claimed = Claim(w, 1);
    ASSERT_EQ(claimed.size(), 1u);
    ASSERT_EQ(claimed[0].id, id);
    JobOutcome o{JobRef{id, claimed[0].lease_token}, ok, {}, {}};
    o.error.kind = kind;
    ASSERT_TRUE(store_->JobFinishMany(w, std::span(&o, 1)).has_value());
  };
  finish(twice, false, ErrorKind::kLost);
  finish(twice, false, ErrorKind::kLost);
  finish(twice, true, ErrorKind::kError);
  finish(once, false, ErrorKind::kLost);
  finish(once, true, ErrorKind::kError);
  const Stats stats = store_->GetStats().value();
  EXPECT_EQ(stats.rescued, 3);
  ASSERT_EQ(stats.rescued_jobs, 2);
  JobFilter f;
  f.rescued = true;
  int64_t total = 0;
  EXPECT_EQ(Ids(f, &total), (IdList{once, twice}));
  EXPECT_EQ(total, stats.rescued_jobs);
  f.states = {JobState::kSucceeded};
  EXPECT_EQ(Ids(f), (IdList{once, twice}));
  f.states = {JobState::kAvailable};
  EXPECT_EQ(Ids(f), IdList{});
  JobFilter all_rescued;
  all_rescued.rescued = true;
  auto op = store_->BulkOpCreate(BulkAction::kDelete, all_rescued, "cli:test", {});
  ASSERT_TRUE(op.has_value()) << op.error().ToString();
  EXPECT_EQ(op->total, stats.rescued_jobs);
  f = {};
  f.states = {JobState::kDead, JobState::kAvailable};
  EXPECT_EQ(Ids(f), (IdList{never, failed[0]})) << "the others are not rescued";
}

// Stop after k batches, reopen (another store: another process), take the
// operation over once the lease ran out, finish: nothing done twice.
TEST_P(BulkStoreTest, AnOperationResumesAtItsCursorInAnotherProcess) {
  const IdList dead = AddDead(7);  // oldest first
  auto op = store_->BulkOpCreate(BulkAction::kRetry, JobFilter{}, "token:ops", {});
  ASSERT_TRUE(op.has_value()) << op.error().ToString();
  ASSERT_EQ(op->total, 7);
  const IdList late = AddDead(1);  // after the start: above the high water

  const Millis lease = seconds(10);
  auto mine = store_->BulkOpClaim("runner-a", lease, 0);
  ASSERT_TRUE(mine.has_value() && mine->has_value());
  EXPECT_EQ((*mine)->id, op->id);
  EXPECT_FALSE(OpenAnother()->BulkOpClaim("runner-b", lease, 0).value().has_value())
      << "held by runner-a";
  for (int k = 0; k < 2; ++k) {
    auto step = store_->BulkOpStep(op->id, "runner-a", 2, lease);
    ASSERT_TRUE(step.has_value()) << step.error().ToString();
    EXPECT_EQ(step->done, 2 * (k + 1));
  }
  // The four newest are available again. Make them dead once more: were
  // they retried a second time, they would be available at the end.
  for (int i = 3; i < 7; ++i) ASSERT_EQ(StateOf(dead[i]), JobState::kAvailable);
  Kill({dead[3], dead[4], dead[5], dead[6]});

  // runner-a dies. Another process finds the operation once its lease ran out.
  std::unique_ptr<Store> next = OpenAnother();
  store_ = std::move(next);
  EXPECT_FALSE(store_->BulkOpClaim("runner-b", lease, 0).value().has_value());
  clock_.Advance(lease + seconds(1));
  auto taken = store_->BulkOpClaim("runner-b", lease, 0);
  ASSERT_TRUE(taken.has_value() && taken->has_value()) << "the lease ran out";
  EXPECT_EQ((*taken)->done, 4);
  EXPECT_EQ((*taken)->cursor, dead[3]);
  EXPECT_EQ(store_->BulkOpStep(op->id, "runner-a", 2, lease).error().code(),
            StatusCode::kAborted)
      << "the old runner, should it wake, changes nothing";
  BulkOp last;
  for (int i = 0; i < 5 && last.state != BulkState::kDone; ++i) {
    auto step = store_->BulkOpStep(op->id, "runner-b", 2, lease);
    ASSERT_TRUE(step.has_value()) << step.error().ToString();
    last = *step;
  }
  EXPECT_EQ(last.state, BulkState::kDone);
  EXPECT_EQ(last.done, 7);
  EXPECT_EQ(last.batches, 4) << "2 + 2 + 2 + 1";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(StateOf(dead[i]), JobState::kAvailable) << i;
  for (int i = 3; i < 7; ++i) EXPECT_EQ(StateOf(dead[i]), JobState::kDead) << "not twice: " << i;
  EXPECT_EQ(StateOf(late[0]), JobState::kDead) << "enqueued after the start";
  EXPECT_EQ(store_->BulkOpGet(op->id).value().done, 7);
  EXPECT_EQ(store_->BulkOpList(10).value().size(), 1u);
  EXPECT_FALSE(store_->BulkOpClaim("runner-c", lease, 0).value().has_value()) << "done";

  auto audit = store_->AuditList(10, 0).value();
  ASSERT_EQ(audit.size(), 2u);
  EXPECT_EQ(audit[0].action, "jobs.bulk_retry.done");
  EXPECT_EQ(audit[0].count, 7);
  EXPECT_EQ(audit[0].actor, "token:ops");
  EXPECT_EQ(audit[1].action, "jobs.bulk_retry");
  EXPECT_EQ(audit[1].count, 7);
}

TEST_P(BulkStoreTest, AReleasedOperationIsTakenAtOnce) {
  AddDead(3);
  auto op = store_->BulkOpCreate(BulkAction::kDelete, JobFilter{}, "cli:test", {});
  ASSERT_TRUE(op.has_value());
  ASSERT_TRUE(store_->BulkOpClaim("a", seconds(10), 0).value().has_value());
  ASSERT_TRUE(store_->BulkOpStep(op->id, "a", 1, seconds(10)).has_value());
  ASSERT_TRUE(store_->BulkOpRelease(op->id, "b").ok()) << "not b's: nothing changes";
  EXPECT_FALSE(store_->BulkOpClaim("b", seconds(10), 0).value().has_value());
  ASSERT_TRUE(store_->BulkOpRelease(op->id, "a").ok());
  auto taken = store_->BulkOpClaim("b", seconds(10), 0);
  ASSERT_TRUE(taken.has_value() && taken->has_value()) << "at once, no lease to wait out";
  EXPECT_EQ((*taken)->done, 1);
  EXPECT_EQ(store_->BulkOpStep(op->id, "a", 1, seconds(10)).error().code(), StatusCode::kAborted);
  BulkOp last = **taken;
  while (last.state == BulkState::kRunning) {
    last = store_->BulkOpStep(op->id, "b", 1, seconds(10)).value();
  }
  EXPECT_EQ(last.done, 3);
}

TEST_P(BulkStoreTest, CancelAndDeleteInBatches) {
  std::vector<JobId> waiting;
  for (int i = 0; i < 5; ++i) waiting.push_back(Add(Spec()));
  const JobId running = Add(Spec("r"));
  const WorkerId w = RegisterWorker("rw");
  ClaimParams p;
  p.worker = w;
  p.tasks = {"r"};
  ASSERT_EQ(store_->JobClaim(p).value().size(), 1u);
  auto cancel = store_->BulkOpCreate(BulkAction::kCancel, JobFilter{}, "cli:test", {});
  ASSERT_TRUE(cancel.has_value());
  EXPECT_EQ(cancel->total, 6);
  ASSERT_TRUE(store_->BulkOpClaim("r1", seconds(10), cancel->id).value().has_value());
  BulkOp op = *cancel;
  while (op.state == BulkState::kRunning) {
    op = store_->BulkOpStep(op.id, "r1", 4, seconds(10)).value();
  }
  EXPECT_EQ(op.done, 6);
  for (JobId id : waiting) EXPECT_EQ(StateOf(id), JobState::kCancelled);
  EXPECT_EQ(StateOf(running), JobState::kRunning) << "its worker is asked to stop it";
  EXPECT_EQ(store_->WorkerHeartbeat(w).value().cancel, std::vector<JobId>{running});

  JobFilter f;
  f.states = {JobState::kCancelled, JobState::kRunning};
  auto del = store_->BulkOpCreate(BulkAction::kDelete, f, "cli:test", {});
  ASSERT_TRUE(del.has_value());
  EXPECT_EQ(del->total, 5) << "the running job is out of a delete's scope";
  ASSERT_TRUE(store_->BulkOpClaim("r2", seconds(10), del->id).value().has_value());
  op = *del;
  while (op.state == BulkState::kRunning) {
    op = store_->BulkOpStep(op.id, "r2", 2, seconds(10)).value();
  }
  EXPECT_EQ(op.done, 5);
  int64_t total = -1;
  EXPECT_EQ(Ids(JobFilter{}, &total), IdList{running});
  EXPECT_EQ(total, 1);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, BulkStoreTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace warden::testing
