// Behaviour every Store backend must have. Time is a FakeClock, so lease
// expiry and backoff are exact, not slept for.
#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <map>
#include <set>

#include "store_fixture.h"

namespace warden::testing {
namespace {

using std::chrono::seconds;

TEST_P(StoreTest, InsertThenGetRoundTrips) {
  JobSpec s = Spec();
  s.payload = {{"n", 7}};
  s.priority = 3;
  s.delivery = Delivery::kAtMostOnce;
  s.concurrency_key = "k";
  const JobId id = Add(s);
  auto job = store_->JobGet(id);
  ASSERT_TRUE(job.has_value()) << job.error().ToString();
  EXPECT_EQ(job->task, "t");
  EXPECT_EQ(job->payload["n"], 7);
  EXPECT_EQ(job->priority, 3);
  EXPECT_EQ(job->state, JobState::kAvailable);
  EXPECT_EQ(job->delivery, Delivery::kAtMostOnce);
  EXPECT_EQ(job->concurrency_key, "k");
  EXPECT_EQ(job->created_at, clock_.NowMs());
  EXPECT_TRUE(job->attempts.empty());
}

TEST_P(StoreTest, GetUnknownJobIsNotFound) {
  auto job = store_->JobGet(4242);
  ASSERT_FALSE(job.has_value());
  EXPECT_EQ(job.error().code(), StatusCode::kNotFound);
}

TEST_P(StoreTest, UniqueKeyDedupesWhileLiveOnly) {
  JobSpec s = Spec();
  s.unique_key = "u";
  auto first = store_->JobInsertMany(std::span<const JobSpec>(&s, 1));
  auto second = store_->JobInsertMany(std::span<const JobSpec>(&s, 1));
  ASSERT_TRUE(first && second);
  EXPECT_TRUE((*first)[0].created);
  EXPECT_FALSE((*second)[0].created);
  EXPECT_EQ((*first)[0].id, (*second)[0].id);

  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w);
  ASSERT_EQ(jobs.size(), 1u);
  JobOutcome ok{JobRef{jobs[0].id, jobs[0].lease_token}, true, Json(), {}};
  ASSERT_TRUE(store_->JobFinishMany(w, std::span(&ok, 1)).has_value());
  auto third = store_->JobInsertMany(std::span<const JobSpec>(&s, 1));
  ASSERT_TRUE(third.has_value());
  EXPECT_TRUE((*third)[0].created) << "a finished job no longer holds its key";
}

// A large batch (on SQLite, several rows to a statement) returns each
// job's own id in order, and a unique key within the batch is checked
// against the rows inserted before it.
TEST_P(StoreTest, ABatchEnqueueReturnsEachJobsIdInOrder) {
  std::vector<JobSpec> specs;
  for (int i = 0; i < 75; ++i) {
    JobSpec s = Spec();
    s.payload = Json{{"n", i}};
    if (i == 40 || i == 50) s.unique_key.push_back('u');  // (= "u": a false -Wrestrict in g++ 12)
    specs.push_back(s);
  }
  auto r = store_->JobInsertMany(specs);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->size(), specs.size());
  std::set<JobId> ids;
  for (int i = 0; i < 75; ++i) {
    if (i == 50) {
      EXPECT_FALSE((*r)[i].created);
      EXPECT_EQ((*r)[i].id, (*r)[40].id);
      continue;
    }
    EXPECT_TRUE((*r)[i].created) << i;
    ids.insert((*r)[i].id);
    auto job = store_->JobGet((*r)[i].id);
    ASSERT_TRUE(job.has_value()) << i;
    EXPECT_EQ(job->payload["n"], i);
  }
  EXPECT_EQ(ids.size(), 74u);
}

TEST_P(StoreTest, ClaimTakesHighestPriorityThenOldest) {
  const JobId low = Add(Spec());
  JobSpec hi = Spec();
  hi.priority = 5;
  const JobId high = Add(hi);
  const JobId low2 = Add(Spec());
  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w, 3);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].id, high);
  EXPECT_EQ(jobs[1].id, low);
  EXPECT_EQ(jobs[2].id, low2);
  for (const auto& j : jobs) {
    EXPECT_EQ(j.state, JobState::kRunning);
    EXPECT_EQ(j.attempt, 1);
    EXPECT_EQ(j.lease_token, 1);
    EXPECT_EQ(j.worker, w);
    EXPECT_EQ(j.lease_expires_at, clock_.NowMs() + 10'000);
  }
}

TEST_P(StoreTest, ClaimOnlyTakesHandledTasksAndQueues) {
  Add(Spec("other"));
  JobSpec q = Spec();
  q.queue = "elsewhere";
  Add(q);
  JobSpec cmd = Spec("shell");
  cmd.command = "true";
  Add(cmd);
  const WorkerId w = RegisterWorker();
  EXPECT_TRUE(Claim(w).empty());

  ClaimParams p;
  p.worker = w;
  p.queues = {"default"};
  p.allow_commands = true;
  p.limit = 10;
  auto jobs = store_->JobClaim(p);
  ASSERT_TRUE(jobs.has_value());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].command, "true");
}

// A worker of several queues takes their jobs in one claim order, as if
// they were one queue, and still one job per concurrency key.
TEST_P(StoreTest, ClaimFromSeveralQueuesMergesThemInClaimOrder) {
  auto in = [this](const char* queue, int priority = 0, const char* key = "") {
    JobSpec s = Spec();
    s.queue = queue;
    s.priority = priority;
    s.concurrency_key = key;
    return Add(s);
  };
  const JobId b_old = in("b");
  clock_.Advance(Millis(1));
  const JobId a_mid = in("a");
  in("c");  // not served
  const JobId b_high = in("b", 5);
  clock_.Advance(Millis(1));
  const JobId a_new = in("a");
  const JobId a_high = in("a", 7);
  clock_.Advance(Millis(1));
  const JobId b_key = in("b", 0, "k");
  const JobId a_key = in("a", 0, "k");
  const WorkerId w = RegisterWorker();
  ClaimParams p;
  p.worker = w;
  p.queues = {"a", "b"};
  p.tasks = {"t"};
  p.limit = 10;
  auto jobs = store_->JobClaim(p);
  ASSERT_TRUE(jobs.has_value()) << jobs.error().ToString();
  std::vector<JobId> ids;
  for (const auto& j : *jobs) ids.push_back(j.id);
  EXPECT_EQ(ids, (std::vector<JobId>{a_high, b_high, b_old, a_mid, a_new, b_key}));
  p.limit = 1;
  auto more = store_->JobClaim(p);
  ASSERT_TRUE(more.has_value());
  EXPECT_TRUE(more->empty()) << "job " << a_key << " shares a running job's key";
}

// Hundreds of queues (a queue per tenant, say): SQLite merges at most 64
// and sorts past that (a compound SELECT has at most 500 arms).
TEST_P(StoreTest, ClaimFromHundredsOfQueues) {
  ClaimParams p;
  p.worker = RegisterWorker();
  // (fmt: "q" + std::to_string(i) trips a false -Wrestrict in g++ 12)
  for (int i = 0; i < 600; ++i) p.queues.push_back(fmt::format("q{}", i));
  p.tasks = {"t"};
  p.limit = 10;
  JobSpec s = Spec();
  s.queue = p.queues[599];
  const JobId last = Add(s);
  s.queue = p.queues[7];
  s.priority = 1;
  const JobId first = Add(s);
  auto jobs = store_->JobClaim(p);
  ASSERT_TRUE(jobs.has_value()) << jobs.error().ToString();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, first);
  EXPECT_EQ((*jobs)[1].id, last);
}

TEST_P(StoreTest, TwoConnectionsClaimDisjointJobs) {
  for (int i = 0; i < 20; ++i) Add(Spec());
  auto other = OpenAnother();
  const WorkerId a = RegisterWorker("a");
  const WorkerId b = RegisterWorker("b");
  ClaimParams p;
  p.queues = {"default"};
  p.tasks = {"t"};
  p.limit = 7;
  std::set<JobId> seen;
  for (int round = 0; round < 3; ++round) {
    p.worker = a;
    auto ja = store_->JobClaim(p);
    p.worker = b;
    auto jb = other->JobClaim(p);
    ASSERT_TRUE(ja && jb);
    for (auto* v : {&*ja, &*jb}) {
      for (const auto& j : *v) EXPECT_TRUE(seen.insert(j.id).second) << "claimed twice";
    }
  }
  EXPECT_EQ(seen.size(), 20u);
}

TEST_P(StoreTest, OneRunningJobPerConcurrencyKey) {
  JobSpec s = Spec();
  s.concurrency_key = "acct-1";
  const JobId first = Add(s);
  const JobId second = Add(s);
  Add(Spec());
  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w, 10);
  ASSERT_EQ(jobs.size(), 2u) << "one keyed job and the unkeyed one";
  EXPECT_EQ(jobs[0].id, first);
  EXPECT_TRUE(Claim(w).empty()) << "the key is held";

  JobOutcome ok{JobRef{first, jobs[0].lease_token}, true, Json(), {}};
  ASSERT_TRUE(store_->JobFinishMany(w, std::span(&ok, 1)).has_value());
  auto next = Claim(w);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].id, second);
}

// Jobs claimed ahead of free slots are charged like the others when their
// worker dies, so only those one such loss cannot kill are taken for them
// (core/claim_ahead.h); the free slots take jobs in claim order as always.
// PostgreSQL checks this in SQL on its one-statement claim and in C++ on
// its transaction (taken when a due job needs promoting): both are run.
TEST_P(StoreTest, ClaimAheadTakesOnlyJobsALossCannotKill) {
  auto spec = [&](auto change) {
    JobSpec s = Spec();
    change(s);
    return Add(s);
  };
  const JobId plain = Add(Spec());
  const JobId no_retry = spec([](JobSpec& s) { s.retry = RetryPolicy::kNone; });
  const JobId one_crash = spec([](JobSpec& s) { s.max_crashes = 1; });
  const JobId last_attempt = spec([](JobSpec& s) { s.max_attempts = 1; });
  const JobId at_most_once = spec([](JobSpec& s) {
    s.delivery = Delivery::kAtMostOnce;
    s.retry = RetryPolicy::kNone;
  });
  const JobId forever = spec([](JobSpec& s) {
    s.retry = RetryPolicy::kForever;
    s.max_attempts = 1;
  });
  const JobId beyond = Add(Spec());
  const WorkerId w = RegisterWorker();
  auto ids = [](const std::vector<JobInfo>& jobs) {
    std::vector<JobId> out;
    for (const JobInfo& j : jobs) out.push_back(j.id);
    return out;
  };

  // One free slot and five ahead: the slot's job, then the safe ones among
  // the next five; the seventh job is not looked at.
  EXPECT_EQ(ids(Claim(w, 6, Millis(10'000), 5)),
            (std::vector<JobId>{plain, at_most_once, forever}));
  // A free slot takes the next job, safe or not.
  EXPECT_EQ(ids(Claim(w, 2, Millis(10'000), 1)), (std::vector<JobId>{no_retry}));
  for (JobId id : {one_crash, last_attempt, beyond}) {
    EXPECT_EQ(store_->JobGet(id)->state, JobState::kAvailable) << "job " << id;
  }
  EXPECT_EQ(ids(Claim(w, 3, Millis(10'000), 3)), (std::vector<JobId>{beyond}));

  // A job that crashed once may be the one that kills workers: not ahead.
  JobSpec again = Spec();
  again.retry = RetryPolicy::kForever;
  const JobId crashed = Add(again);
  // Free slots take the two left, then the new one.
  ASSERT_EQ(ids(Claim(w, 2)), (std::vector<JobId>{one_crash, last_attempt}));
  auto mine = Claim(w, 1);
  ASSERT_EQ(ids(mine), (std::vector<JobId>{crashed}));
  JobOutcome crash{JobRef{crashed, mine[0].lease_token}, false, {}, {}};
  crash.error.kind = ErrorKind::kCrash;
  ASSERT_TRUE(store_->JobFinishMany(w, std::span(&crash, 1)).has_value());
  const JobId fresh = Add(Spec());
  clock_.Advance(seconds(120));  // the crash's backoff is over: due again
  EXPECT_EQ(ids(Claim(w, 2, Millis(10'000), 2)), (std::vector<JobId>{fresh}));
  EXPECT_EQ(store_->JobGet(crashed)->state, JobState::kAvailable);

  // Nor one whose lease was lost once (no crash: its worker may live): it
  // waits for a free slot rather than behind another job's run.
  ASSERT_EQ(ids(Claim(w, 1)), (std::vector<JobId>{crashed}));
  const JobId rescued = Add(again);
  ASSERT_EQ(ids(Claim(w, 1)), (std::vector<JobId>{rescued}));
  std::vector<LeaseRow> leases = store_->JobLeases().value();
  std::erase_if(leases, [&](const LeaseRow& l) { return l.ref.id != rescued; });
  ASSERT_EQ(store_->JobRescueSilent(leases)->rescued, 1);
  ASSERT_EQ(store_->JobGet(rescued)->crashes, 0);
  const JobId later = Add(Spec());
  EXPECT_EQ(ids(Claim(w, 2, Millis(10'000), 2)), (std::vector<JobId>{later}));
  EXPECT_EQ(store_->JobGet(rescued)->state, JobState::kAvailable);
}

TEST_P(StoreTest, DelayedJobWaitsUntilDue) {
  JobSpec s = Spec();
  s.delay = seconds(30);
  const JobId id = Add(s);
  EXPECT_EQ(store_->JobGet(id)->state, JobState::kScheduled);
  const WorkerId w = RegisterWorker();
  EXPECT_TRUE(Claim(w).empty());
  clock_.Advance(seconds(31));
  auto jobs = Claim(w);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, id);
}

TEST_P(StoreTest, JobWithARunAtTimeWaitsUntilThenAndAPastOneRunsNow) {
  const TimeMs now = clock_.NowMs();
  JobSpec later = Spec(), past = Spec(), deadline = Spec(), unique = Spec();
  later.run_at = now + 30'000;
  past.run_at = now - 3'600'000;
  deadline.run_at = now + 10'000;
  deadline.start_deadline = seconds(60);
  unique.run_at = now + 20'000;
  unique.unique_key = "k";  // the other insert path
  const JobId l = Add(later), p = Add(past), d = Add(deadline), u = Add(unique);
  EXPECT_EQ(store_->JobGet(l)->state, JobState::kScheduled);
  EXPECT_EQ(store_->JobGet(l)->run_at, now + 30'000);
  EXPECT_EQ(store_->JobGet(p)->state, JobState::kAvailable);
  EXPECT_EQ(store_->JobGet(p)->run_at, now);
  EXPECT_EQ(store_->JobGet(d)->start_deadline_at, now + 70'000);  // from its run_at
  EXPECT_EQ(store_->JobGet(u)->state, JobState::kScheduled);
  EXPECT_EQ(store_->JobGet(u)->run_at, now + 20'000);
  // A batch mixes both kinds, each with its own rule.
  std::vector<JobSpec> batch(3, Spec());
  batch[0].run_at = now + 40'000;
  batch[1].delay = seconds(50);
  auto ids = store_->JobInsertMany(batch);
  ASSERT_TRUE(ids.has_value()) << ids.error().ToString();
  EXPECT_EQ(store_->JobGet((*ids)[0].id)->run_at, now + 40'000);
  EXPECT_EQ(store_->JobGet((*ids)[1].id)->run_at, now + 50'000);
  EXPECT_EQ(store_->JobGet((*ids)[2].id)->state, JobState::kAvailable);

  const WorkerId w = RegisterWorker();
  auto claimed = Claim(w, 10);
  ASSERT_EQ(claimed.size(), 2u);  // the past one and the batch's plain one
  clock_.Advance(seconds(31));
  std::vector<JobId> due;
  for (const auto& j : Claim(w, 10)) due.push_back(j.id);
  std::sort(due.begin(), due.end());
  EXPECT_EQ(due, (std::vector<JobId>{l, d, u}));
}

TEST_P(StoreTest, StaleCompletionIsFencedOffAndLogged) {
  const JobId id = Add(Spec());
  const WorkerId a = RegisterWorker("a");
  const WorkerId b = RegisterWorker("b");
  auto first = Claim(a, 1, seconds(5));
  ASSERT_EQ(first.size(), 1u);
  clock_.Advance(seconds(6));
  auto rescued = store_->JobRescueSilent(store_->JobLeases().value());
  ASSERT_TRUE(rescued.has_value());
  EXPECT_EQ(rescued->rescued, 1);
  auto second = Claim(b);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].lease_token, first[0].lease_token + 1);

  JobOutcome stale{JobRef{id, first[0].lease_token}, true, Json("old"), {}};
  auto r = store_->JobFinishMany(a, std::span(&stale, 1));
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE((*r)[0]);
  EXPECT_FALSE(store_->JobCheckpoint(stale.ref, Json(1)).value());
  EXPECT_EQ(store_->JobGet(id)->state, JobState::kRunning);

  JobOutcome fresh{JobRef{id, second[0].lease_token}, true, Json("new"), {}};
  r = store_->JobFinishMany(b, std::span(&fresh, 1));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE((*r)[0]);
  auto job = store_->JobGet(id);
  EXPECT_EQ(job->state, JobState::kSucceeded);
  EXPECT_EQ(job->result, Json("new"));
  ASSERT_EQ(job->attempts.size(), 2u);
  EXPECT_EQ(job->attempts[0].outcome, "lost");
  EXPECT_EQ(job->attempts[1].outcome, "succeeded");
  EXPECT_EQ(store_->GetStats()->fenced_writes, 1) << "checkpoints are refused, not logged";
}

TEST_P(StoreTest, ErrorsRetryWithBackoffThenDie) {
  JobSpec s = Spec();
  s.max_attempts = 2;
  const JobId id = Add(s);
  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w);
  JobOutcome fail{JobRef{id, jobs[0].lease_token}, false, {}, {}};
  fail.error.kind = ErrorKind::kError;
  fail.error.exit_code = 3;
  fail.error.message = "exit 3";
  fail.error.stderr_tail = "boom";
  fail.error.stdout_tail = "step 7 of 9";
  ASSERT_TRUE(store_->JobFinishMany(w, std::span(&fail, 1)).has_value());
  auto job = store_->JobGet(id);
  EXPECT_EQ(job->state, JobState::kRetryable);
  EXPECT_GE(job->run_at, clock_.NowMs() + 500) << "backoff of at least half the 1 s base";
  EXPECT_TRUE(Claim(w).empty());
  clock_.Advance(seconds(2));
  jobs = Claim(w);
  ASSERT_EQ(jobs.size(), 1u);
  fail.ref.lease_token = jobs[0].lease_token;
  ASSERT_TRUE(store_->JobFinishMany(w, std::span(&fail, 1)).has_value());
  job = store_->JobGet(id);
  EXPECT_EQ(job->state, JobState::kDead);
  EXPECT_EQ(job->last_error, ErrorKind::kError);
  ASSERT_EQ(job->attempts.size(), 2u);
  ASSERT_TRUE(job->attempts[0].error.has_value());
  EXPECT_EQ(job->attempts[0].error->exit_code, 3);
  EXPECT_EQ(job->attempts[0].error->stderr_tail, "boom");
  EXPECT_EQ(job->attempts[0].error->stdout_tail, "step 7 of 9") << "kept beside stderr's";
  EXPECT_TRUE(job->finished_at.has_value());
}

TEST_P(StoreTest, AtMostOnceIsRequeuedBeforeStartAndDeadAfter) {
  JobSpec s = Spec();
  s.delivery = Delivery::kAtMostOnce;
  const JobId before = Add(s);
  const JobId after = Add(s);
  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w, 2);
  ASSERT_EQ(jobs.size(), 2u);
  ASSERT_TRUE(store_->JobMarkStarted(JobRef{after, jobs[1].lease_token}).value());
  auto rescued = store_->WorkerDeclareDead(w, "test", LossCause::kProvenDeath, nullptr);
  ASSERT_TRUE(rescued.has_value());
  EXPECT_EQ(rescued->rescued, 2);
  auto b = store_->JobGet(before);
  EXPECT_EQ(b->state, JobState::kAvailable);
  EXPECT_EQ(b->charged, 0);
  auto a = store_->JobGet(after);
  EXPECT_EQ(a->state, JobState::kDead);
  EXPECT_EQ(a->last_error, ErrorKind::kLost);
  ASSERT_TRUE(a->attempts[0].started_at.has_value());
}

// A worker's batch of outcomes: successes without a result (written
// together on SQLite), one with a result, a failure, and two that are not
// the holder's (a stale lease token, a job that does not exist). Each is
// fenced on its own; only the last two are refused and logged.
TEST_P(StoreTest, ABatchOfOutcomesIsFencedOneByOne) {
  for (int i = 0; i < 5; ++i) Add(Spec());
  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w, 5);
  ASSERT_EQ(jobs.size(), 5u);
  auto ref = [&](int i) { return JobRef{jobs[i].id, jobs[i].lease_token}; };
  std::vector<JobOutcome> batch(6);
  batch[0] = {ref(0), true, Json(), {}};
  batch[1] = {JobRef{jobs[1].id, jobs[1].lease_token - 1}, true, Json(), {}};
  batch[2] = {ref(2), true, Json(7), {}};
  batch[3].ref = ref(3);
  batch[3].error.kind = ErrorKind::kError;
  batch[3].error.message = "no";
  batch[4] = {ref(4), true, Json(), {}};
  batch[4].note = "ignored fd-3 line";  // each success keeps its own note
  batch[5] = {JobRef{jobs[4].id + 1000, 1}, true, Json(), {}};
  auto r = store_->JobFinishMany(w, batch);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(*r, (std::vector<bool>{true, false, true, true, true, false}));
  for (int i : {0, 4}) {
    auto job = store_->JobGet(jobs[i].id);
    EXPECT_EQ(job->state, JobState::kSucceeded);
    EXPECT_TRUE(job->result.is_null());
    ASSERT_EQ(job->attempts.size(), 1u);
    EXPECT_EQ(job->attempts[0].outcome, "succeeded");
    EXPECT_EQ(job->attempts[0].finished_at, std::optional<TimeMs>(clock_.NowMs()));
  }
  EXPECT_EQ(store_->JobGet(jobs[0].id)->attempts[0].note, "");
  EXPECT_EQ(store_->JobGet(jobs[4].id)->attempts[0].note, "ignored fd-3 line");
  EXPECT_EQ(store_->JobGet(jobs[1].id)->state, JobState::kRunning);
  EXPECT_EQ(store_->JobGet(jobs[2].id)->result, Json(7));
  EXPECT_EQ(store_->JobGet(jobs[3].id)->attempts.at(0).outcome, "error");
  EXPECT_EQ(store_->GetStats()->fenced_writes, 2);
}

// Every field of an attempt while it runs and once it succeeded. (SQLite
// keeps both in the job row, not in `attempts`: see its schema 3.)
TEST_P(StoreTest, AnAttemptInProgressAndASucceededOneAreShownWithTheirTimes) {
  JobSpec s = Spec();
  s.delivery = Delivery::kAtMostOnce;
  const JobId id = Add(s);
  clock_.Advance(Millis(5));
  const TimeMs claimed_at = clock_.NowMs();
  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w);
  ASSERT_EQ(jobs.size(), 1u);
  auto running = store_->JobGet(id);
  ASSERT_TRUE(running.has_value()) << running.error().ToString();
  ASSERT_EQ(running->attempts.size(), 1u);
  auto expect_its_claim = [&](const AttemptInfo& a) {
    EXPECT_EQ(a.attempt, 1);
    EXPECT_EQ(a.worker, w);
    EXPECT_EQ(a.lease_token, jobs[0].lease_token);
    EXPECT_EQ(a.claimed_at, claimed_at);
  };
  const AttemptInfo& r = running->attempts[0];
  expect_its_claim(r);
  EXPECT_FALSE(r.started_at.has_value());
  EXPECT_FALSE(r.finished_at.has_value());
  EXPECT_EQ(r.outcome, "running");
  EXPECT_FALSE(r.error.has_value());

  clock_.Advance(Millis(7));
  const TimeMs started_at = clock_.NowMs();
  ASSERT_TRUE(store_->JobMarkStarted(JobRef{id, jobs[0].lease_token}).value());
  clock_.Advance(Millis(11));
  const TimeMs finished_at = clock_.NowMs();
  JobOutcome ok;
  ok.ref = JobRef{id, jobs[0].lease_token};
  ok.success = true;
  ASSERT_TRUE(store_->JobFinishMany(w, std::span(&ok, 1)).value().at(0));
  auto done = store_->JobGet(id);
  ASSERT_TRUE(done.has_value());
  ASSERT_EQ(done->attempts.size(), 1u);
  const AttemptInfo& d = done->attempts[0];
  expect_its_claim(d);
  EXPECT_EQ(d.started_at, std::optional<TimeMs>(started_at));
  EXPECT_EQ(d.finished_at, std::optional<TimeMs>(finished_at));
  EXPECT_EQ(d.outcome, "succeeded");
  EXPECT_FALSE(d.error.has_value());
}

TEST_P(StoreTest, MarkStartedIsFenced) {
  JobSpec s = Spec();
  s.delivery = Delivery::kAtMostOnce;
  const JobId id = Add(s);
  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w);
  EXPECT_FALSE(store_->JobMarkStarted(JobRef{id, jobs[0].lease_token + 1}).value());
}

TEST_P(StoreTest, RepeatedCrashesQuarantineTheJob) {
  JobSpec s = Spec();
  s.max_crashes = 2;
  s.retry = RetryPolicy::kForever;
  const JobId id = Add(s);
  const WorkerId w = RegisterWorker();
  for (int i = 0; i < 2; ++i) {
    clock_.Advance(seconds(120));
    auto jobs = Claim(w);
    ASSERT_EQ(jobs.size(), 1u) << "round " << i;
    JobOutcome crash{JobRef{id, jobs[0].lease_token}, false, {}, {}};
    crash.error.kind = ErrorKind::kCrash;
    crash.error.signal = 9;
    ASSERT_TRUE(store_->JobFinishMany(w, std::span(&crash, 1)).has_value());
  }
  auto job = store_->JobGet(id);
  EXPECT_EQ(job->state, JobState::kDead);
  EXPECT_EQ(job->last_error, ErrorKind::kCrashLoop);
  EXPECT_EQ(store_->GetStats()->crash_loops, 1);
}

// The crash budget counts only losses whose worker is gone (core/retry.h):
// a lease judged silent, and a worker's own report that it stopped the job
// (self-fenced), cost an attempt each and are retried at once; a proven
// death costs a crash too.
TEST_P(StoreTest, OnlyALossWhoseWorkerIsGoneCountsAsACrash) {
  JobSpec s = Spec();
  s.max_crashes = 1;  // one counted loss would quarantine it
  s.max_attempts = 10;
  const JobId id = Add(s);
  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w);
  ASSERT_EQ(jobs.size(), 1u);
  auto silent = store_->JobRescueSilent(store_->JobLeases().value());
  ASSERT_TRUE(silent.has_value());
  EXPECT_EQ(silent->rescued, 1);
  auto job = store_->JobGet(id);
  EXPECT_EQ(job->state, JobState::kRetryable);
  EXPECT_EQ(job->charged, 1);
  EXPECT_EQ(job->crashes, 0) << "a lease that ran out is no crash";
  EXPECT_LE(job->run_at, clock_.NowMs()) << "retried at once";

  jobs = Claim(w);
  ASSERT_EQ(jobs.size(), 1u);
  JobOutcome fenced{JobRef{id, jobs[0].lease_token}, false, {}, {}};
  fenced.error.kind = ErrorKind::kLost;  // the worker's own: no lost_by
  fenced.error.message = "this worker could no longer prove its lease was its own";
  ASSERT_TRUE(store_->JobFinishMany(w, std::span(&fenced, 1)).has_value());
  job = store_->JobGet(id);
  EXPECT_EQ(job->state, JobState::kRetryable);
  EXPECT_EQ(job->charged, 2);
  EXPECT_EQ(job->crashes, 0) << "a self-fenced stop is no crash";

  jobs = Claim(w);
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_TRUE(store_->WorkerDeclareDead(w, "test", LossCause::kProvenDeath, nullptr).has_value());
  job = store_->JobGet(id);
  EXPECT_EQ(job->state, JobState::kDead);
  EXPECT_EQ(job->last_error, ErrorKind::kCrashLoop);
  EXPECT_EQ(job->crashes, 1);
}

// A claim returns what it stored (SQLite computes the new values itself
// rather than reading them back), and each attempt's lease is set afresh:
// the per-job lease if there is one, else the claiming worker's, never the
// previous attempt's.
TEST_P(StoreTest, ClaimReturnsTheStoredRowWithALeaseSetAfresh) {
  const JobId plain = Add(Spec());
  JobSpec own = Spec();
  own.lease = seconds(5);
  const JobId leased = Add(own);
  const WorkerId w = RegisterWorker();
  for (const Millis lease : {seconds(10), seconds(30)}) {
    auto jobs = Claim(w, 2, lease);
    ASSERT_EQ(jobs.size(), 2u);
    for (const JobInfo& claimed : jobs) {
      const Millis want = claimed.id == leased ? seconds(5) : lease;
      EXPECT_EQ(claimed.lease, want) << claimed.id;
      EXPECT_EQ(claimed.lease_expires_at, clock_.NowMs() + want.count());
      auto stored = store_->JobGet(claimed.id);
      ASSERT_TRUE(stored.has_value());
      EXPECT_EQ(stored->state, JobState::kRunning);
      EXPECT_EQ(stored->worker, claimed.worker);
      EXPECT_EQ(stored->attempt, claimed.attempt);
      EXPECT_EQ(stored->lease_token, claimed.lease_token);
      EXPECT_EQ(stored->lease, claimed.lease);
      EXPECT_EQ(stored->lease_expires_at, claimed.lease_expires_at);
      EXPECT_EQ(stored->started_at, claimed.started_at);
      ASSERT_FALSE(stored->attempts.empty());
      EXPECT_EQ(stored->attempts.back().lease_token, claimed.lease_token);
      JobOutcome rel{JobRef{claimed.id, claimed.lease_token}, false, {}, {}};
      rel.error.kind = ErrorKind::kReleased;
      ASSERT_TRUE(store_->JobFinishMany(w, std::span(&rel, 1)).has_value());
    }
    clock_.Advance(seconds(1));
  }
  EXPECT_EQ(store_->JobGet(plain)->attempt, 2);
}

TEST_P(StoreTest, ReleasedIsNotCharged) {
  JobSpec s = Spec();
  s.max_attempts = 1;
  const JobId id = Add(s);
  const WorkerId w = RegisterWorker();
  for (int i = 0; i < 3; ++i) {
    auto jobs = Claim(w);
    ASSERT_EQ(jobs.size(), 1u);
    JobOutcome rel{JobRef{id, jobs[0].lease_token}, false, {}, {}};
    rel.error.kind = ErrorKind::kReleased;
    ASSERT_TRUE(store_->JobFinishMany(w, std::span(&rel, 1)).has_value());
    EXPECT_EQ(store_->JobGet(id)->state, JobState::kAvailable) << "no backoff either";
  }
  EXPECT_EQ(store_->JobGet(id)->charged, 0);
}

TEST_P(StoreTest, HeartbeatExtendsLeasesAndReportsCancels) {
  const JobId id = Add(Spec());
  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w, 1, seconds(10));
  clock_.Advance(seconds(8));
  const auto judged = store_->JobLeases().value();
  ASSERT_EQ(judged.size(), 1u);
  auto hb = store_->WorkerHeartbeat(w);
  ASSERT_TRUE(hb.has_value());
  EXPECT_TRUE(hb->alive);
  ASSERT_EQ(hb->held.size(), 1u);
  EXPECT_TRUE(hb->cancel.empty());
  const auto renewed = store_->JobLeases().value();
  ASSERT_EQ(renewed.size(), 1u);
  EXPECT_EQ(renewed[0].expires_at, clock_.NowMs() + 10'000);
  EXPECT_EQ(store_->JobRescueSilent(judged)->rescued, 0) << "renewed since it was judged";

  EXPECT_EQ(store_->JobCancel(id, {}).value(), JobState::kRunning);
  hb = store_->WorkerHeartbeat(w);
  ASSERT_EQ(hb->cancel.size(), 1u);
  EXPECT_EQ(hb->cancel[0], id);
  JobOutcome cancelled{JobRef{id, jobs[0].lease_token}, false, {}, {}};
  cancelled.error.kind = ErrorKind::kCancelled;
  ASSERT_TRUE(store_->JobFinishMany(w, std::span(&cancelled, 1)).has_value());
  EXPECT_EQ(store_->JobGet(id)->state, JobState::kCancelled);
}

TEST_P(StoreTest, DeadWorkerHeartbeatIsRefusedAndExtendsNothing) {
  Add(Spec());
  const WorkerId w = RegisterWorker();
  Claim(w, 1, seconds(10));
  clock_.Advance(seconds(11));
  EXPECT_EQ(store_->WorkerMarkSilent(store_->WorkerListLive("").value(), seconds(10)).value(), 1);
  auto hb = store_->WorkerHeartbeat(w);
  ASSERT_TRUE(hb.has_value());
  EXPECT_FALSE(hb->alive);
  EXPECT_EQ(store_->JobLeases()->at(0).expires_at, clock_.NowMs() - 1000) << "not extended";
  EXPECT_EQ(store_->JobRescueSilent(store_->JobLeases().value())->rescued, 1);
}

TEST_P(StoreTest, PresumedDeadWorkerKeepsJobsUntilTheirLeasesAreJudged) {
  const JobId id = Add(Spec());
  const WorkerId w = RegisterWorker();
  Claim(w, 1, seconds(20));
  clock_.Advance(seconds(11));
  EXPECT_EQ(store_->WorkerMarkSilent(store_->WorkerListLive("").value(), seconds(10)).value(), 1);
  EXPECT_EQ(store_->JobGet(id)->state, JobState::kRunning);
  clock_.Advance(seconds(10));
  EXPECT_EQ(store_->JobRescueSilent(store_->JobLeases().value())->rescued, 1);
  auto job = store_->JobGet(id);
  EXPECT_EQ(job->state, JobState::kRetryable);
  EXPECT_LE(job->run_at, clock_.NowMs()) << "first loss retries at once";
}

TEST_P(StoreTest, RescuedJobRunsBeforeTheBacklog) {
  const JobId first = Add(Spec());
  const WorkerId a = RegisterWorker("a");
  ASSERT_EQ(Claim(a, 1).size(), 1u);
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(Millis(10));
    Add(Spec());
  }
  ASSERT_TRUE(store_->WorkerDeclareDead(a, "killed", LossCause::kProvenDeath, nullptr).has_value());
  const WorkerId b = RegisterWorker("b");
  auto next = Claim(b, 1);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].id, first) << "a rescued job keeps its place in line";
}

TEST_P(StoreTest, LiveNameIsUniqueUntilDeclaredDead) {
  const WorkerId first = RegisterWorker("same");
  WorkerRegistration r;
  r.name = "same";
  auto dup = store_->WorkerRegister(r);
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(
      store_->WorkerDeclareDead(first, "pid gone", LossCause::kProvenDeath, nullptr).has_value());
  auto again = store_->WorkerRegister(r);
  ASSERT_TRUE(again.has_value());
  EXPECT_NE(*again, first) << "ids are never reused";
}

TEST_P(StoreTest, LeaderLeaseIsTakenOverWhenHolderDiesOrIsJudgedSilent) {
  const WorkerId a = RegisterWorker("a");
  const WorkerId b = RegisterWorker("b");
  const auto none = std::nullopt;
  EXPECT_FALSE(store_->LeaderRead("sweeper").value().has_value());
  EXPECT_TRUE(store_->LeaderTryAcquire("sweeper", a, seconds(10), none).value());
  EXPECT_FALSE(store_->LeaderTryAcquire("sweeper", b, seconds(10), none).value());
  clock_.Advance(seconds(1));
  EXPECT_TRUE(store_->LeaderTryAcquire("sweeper", a, seconds(10), none).value()) << "renewal";
  ASSERT_TRUE(store_->WorkerDeclareDead(a, "killed", LossCause::kProvenDeath, nullptr).has_value());
  EXPECT_FALSE(store_->LeaderRead("sweeper").value()->holder_live);
  EXPECT_TRUE(store_->LeaderTryAcquire("sweeper", b, seconds(3), none).value());
  const LeaderRow held = store_->LeaderRead("sweeper").value().value();
  EXPECT_EQ(held.holder, b);
  EXPECT_EQ(held.expires_at, clock_.NowMs() + 3000);
  EXPECT_EQ(held.ttl, seconds(3)) << "the others wait out the holder's own ttl";
  EXPECT_TRUE(held.holder_live);

  // Hours later by the wall clock, but never judged silent: b keeps it.
  const WorkerId c = RegisterWorker("c");
  clock_.Advance(std::chrono::hours(2));
  EXPECT_FALSE(store_->LeaderTryAcquire("sweeper", c, seconds(10), none).value());
  // Judged silent as seen, but b renewed since: b keeps it.
  EXPECT_TRUE(store_->LeaderTryAcquire("sweeper", b, seconds(3), none).value());
  EXPECT_FALSE(store_->LeaderTryAcquire("sweeper", c, seconds(10), held).value());
  // Judged silent as it is: taken over.
  const LeaderRow now = store_->LeaderRead("sweeper").value().value();
  EXPECT_TRUE(store_->LeaderTryAcquire("sweeper", c, seconds(10), now).value());
  EXPECT_EQ(store_->LeaderRead("sweeper").value()->holder, c);
}

TEST_P(StoreTest, JobLeasesShowEachLeaseAndTheHeartbeatThatRenewedIt) {
  const JobId id = Add(Spec());
  const WorkerId w = RegisterWorker();
  clock_.Advance(seconds(1));
  const TimeMs claimed_at = clock_.NowMs();
  auto jobs = Claim(w, 1, seconds(7));
  ASSERT_EQ(jobs.size(), 1u);
  auto leases = store_->JobLeases().value();
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].ref.id, id);
  EXPECT_EQ(leases[0].ref.lease_token, jobs[0].lease_token);
  EXPECT_EQ(leases[0].worker, w);
  EXPECT_EQ(leases[0].expires_at, claimed_at + 7000);
  EXPECT_EQ(leases[0].length, seconds(7));
  ASSERT_TRUE(leases[0].worker_heartbeat.has_value());
  EXPECT_NE(*leases[0].worker_heartbeat, claimed_at) << "renewed by its claim, not a heartbeat";
  clock_.Advance(seconds(2));
  ASSERT_TRUE(store_->WorkerHeartbeat(w).has_value());
  leases = store_->JobLeases().value();
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].expires_at, clock_.NowMs() + 7000);
  EXPECT_EQ(leases[0].worker_heartbeat, leases[0].expires_at - 7000)
      << "one heartbeat renews the worker row and its leases at one time";
}

TEST_P(StoreTest, SilenceVerdictsApplyOnlyToRowsStillAsJudged) {
  Add(Spec());
  Add(Spec());
  const WorkerId a = RegisterWorker("a");
  const WorkerId b = RegisterWorker("b");
  ASSERT_EQ(Claim(a, 1).size(), 1u);
  ASSERT_EQ(Claim(b, 1).size(), 1u);
  const auto live = store_->WorkerListLive("").value();
  const auto leases = store_->JobLeases().value();
  ASSERT_EQ(live.size(), 2u);
  ASSERT_EQ(leases.size(), 2u);
  // b heartbeats after the verdicts were reached: b and its lease are spared.
  clock_.Advance(seconds(1));
  ASSERT_TRUE(store_->WorkerHeartbeat(b).value().alive);
  EXPECT_EQ(store_->WorkerMarkSilent(live, seconds(10)).value(), 1);
  EXPECT_EQ(store_->JobRescueSilent(leases)->rescued, 1);
  const std::vector<WorkerInfo> workers = store_->WorkerList(false).value();
  for (const WorkerInfo& w : workers) {
    EXPECT_EQ(w.state, w.id == a ? WorkerState::kDead : WorkerState::kActive) << w.name;
  }
  EXPECT_EQ(store_->JobLeases()->size(), 1u);
  EXPECT_EQ(store_->JobLeases()->at(0).worker, b);
}

// Each worker row keeps the keepalive threshold it registered with (the
// displays' "silent" needs it), and its heartbeats are stamped by the clock
// Store::Now reads (warden/worker_silence.h compares the two).
TEST_P(StoreTest, AWorkerRowKeepsItsKeepaliveAndHeartbeatsOnTheStoresClock) {
  WorkerRegistration r = TestWorker("short");
  r.keepalive = Millis(3'500);
  const WorkerId short_one = store_->WorkerRegister(r).value();
  const WorkerId usual = RegisterWorker("usual");
  ASSERT_TRUE(store_->WorkerHeartbeat(short_one).value().alive);
  const TimeMs now = store_->Now().value();
  const std::vector<WorkerInfo> workers = store_->WorkerList(true).value();
  ASSERT_EQ(workers.size(), 2u);
  for (const WorkerInfo& w : workers) {
    EXPECT_EQ(w.keepalive, w.id == short_one ? Millis(3'500) : Millis(10'000)) << w.name;
    EXPECT_LE(w.last_heartbeat, now) << w.name;
    EXPECT_LT(now - w.last_heartbeat, 5'000) << w.name;
  }
  EXPECT_NE(usual, 0);
}

// Every worker judged silent in one pass is marked, not only the first
// (SQLite re-ran its first worker's statement for the others).
TEST_P(StoreTest, EverySilentWorkerOfABatchIsMarked) {
  for (const char* name : {"a", "b", "c"}) RegisterWorker(name);
  const auto live = store_->WorkerListLive("").value();
  ASSERT_EQ(live.size(), 3u);
  clock_.Advance(seconds(11));
  EXPECT_EQ(store_->WorkerMarkSilent(live, seconds(10)).value(), 3);
  EXPECT_TRUE(store_->WorkerListLive("").value().empty());
}

TEST_P(StoreTest, CancelPendingRetryDeadAndExpire) {
  const JobId pending = Add(Spec());
  EXPECT_EQ(store_->JobCancel(pending, {}).value(), JobState::kCancelled);
  EXPECT_EQ(store_->JobCancel(pending, {}).error().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(store_->JobRetry(pending, {}, {}).ok());
  EXPECT_EQ(store_->JobGet(pending)->state, JobState::kAvailable);

  JobSpec s = Spec();
  s.start_deadline = seconds(5);
  const JobId late = Add(s);
  clock_.Advance(seconds(6));
  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, pending) << "a job past its start deadline is never claimed";
  EXPECT_EQ(store_->JobExpire().value(), 1);
  EXPECT_EQ(store_->JobGet(late)->state, JobState::kExpired);
  EXPECT_EQ(store_->JobRetry(jobs[0].id, {}, {}).code(), StatusCode::kFailedPrecondition);
}

TEST_P(StoreTest, PruneRemovesOldFinishedJobsOnly) {
  const JobId done = Add(Spec());
  const JobId waiting = Add(Spec());
  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w, 1);
  JobOutcome ok{JobRef{done, jobs[0].lease_token}, true, Json(), {}};
  ASSERT_TRUE(store_->JobFinishMany(w, std::span(&ok, 1)).has_value());
  clock_.Advance(std::chrono::hours(25));
  EXPECT_EQ(store_->Prune(std::chrono::hours(24)).value(), 1);
  EXPECT_EQ(store_->JobGet(done).error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->JobGet(waiting).has_value());
}

// Running jobs are counted and listed like any others (SQLite's state
// index leaves them out: other indexes find them).
TEST_P(StoreTest, CountsAndStats) {
  std::vector<JobId> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(Add(Spec()));
  EXPECT_EQ(store_->JobCountUnfinished().value(), 4);
  const WorkerId w = RegisterWorker();
  auto jobs = Claim(w, 2);
  ASSERT_EQ(jobs.size(), 2u);
  JobOutcome ok{JobRef{jobs[0].id, jobs[0].lease_token}, true, Json(), {}};
  ASSERT_TRUE(store_->JobFinishMany(w, std::span(&ok, 1)).has_value());
  EXPECT_EQ(store_->JobCountUnfinished().value(), 3) << "two available, one running";

  auto stats = store_->GetStats();
  ASSERT_TRUE(stats.has_value());
  using Count = std::pair<std::string, int64_t>;
  EXPECT_EQ(stats->jobs, (std::vector<Count>{{"available", 2}, {"running", 1}, {"succeeded", 1}}));
  ASSERT_EQ(stats->workers.size(), 1u);
  EXPECT_EQ(stats->workers[0].first, "active");

  auto listed = [&](JobState state) {
    JobFilter f;
    f.states = {state};
    std::vector<JobId> out;
    auto list = store_->JobList(f, nullptr);
    EXPECT_TRUE(list.has_value()) << list.error().ToString();
    if (list.has_value()) {
      for (const JobInfo& j : *list) out.push_back(j.id);
    }
    return out;
  };
  EXPECT_EQ(listed(JobState::kRunning), std::vector<JobId>{jobs[1].id});
  EXPECT_EQ(listed(JobState::kSucceeded), std::vector<JobId>{jobs[0].id});
  EXPECT_EQ(listed(JobState::kAvailable), (std::vector<JobId>{ids[3], ids[2]})) << "newest first";
  JobFilter other_queue;
  other_queue.states = {JobState::kRunning};
  other_queue.queue = "elsewhere";
  EXPECT_TRUE(store_->JobList(other_queue, nullptr).value().empty());
}

// A listing of jobs d(ead), r(etryable), n (running), a (available, task
// u), o (available, queue default-other), s (scheduled), added in that order.
class ListingTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    JobSpec dying = Spec();
    dying.max_attempts = 1;
    dying.priority = 9;  // claimed first
    JobSpec retrying = Spec();
    retrying.priority = 8;
    JobSpec running = Spec();
    running.priority = 7;
    d_ = Add(dying);
    r_ = Add(retrying);
    n_ = Add(running);
    a_ = Add(Spec("u"));
    JobSpec other = Spec();
    other.queue += "-other";  // (assigning a literal trips a false -Wrestrict in g++ 12)
    o_ = Add(other);
    JobSpec later = Spec();
    later.delay = seconds(60);
    s_ = Add(later);
    const WorkerId w = RegisterWorker("box-1");
    auto claimed = Claim(w, 3);
    ASSERT_EQ(claimed.size(), 3u);
    std::vector<JobOutcome> fails(2);
    for (int i = 0; i < 2; ++i) {
      fails[i].ref = JobRef{claimed[i].id, claimed[i].lease_token};
      fails[i].error.kind = ErrorKind::kError;
      fails[i].error.message = i == 0 ? "disk full\non /var" : "S3 said 503";
    }
    ASSERT_EQ(claimed[0].id, d_);
    ASSERT_EQ(claimed[1].id, r_);
    auto done = store_->JobFinishMany(w, fails);
    ASSERT_TRUE(done.has_value()) << done.error().ToString();
  }

  // The ids listed, and the total.
  std::pair<std::vector<JobId>, int64_t> List(std::vector<JobState> states, int limit = 100,
                                              const std::string& task = "",
                                              const std::string& queue = "") {
    JobFilter f;
    f.states = std::move(states);
    f.limit = limit;
    f.task = task;
    f.queue = queue;
    int64_t total = -1;
    auto list = store_->JobList(f, &total);
    std::vector<JobId> ids;
    EXPECT_TRUE(list.has_value()) << list.error().ToString();
    if (list.has_value()) {
      for (const JobInfo& j : *list) ids.push_back(j.id);
      EXPECT_EQ(store_->JobList(f, nullptr).value().size(), list->size()) << "uncounted alike";
    }
    return {ids, total};
  }

  JobId d_ = 0, r_ = 0, n_ = 0, a_ = 0, o_ = 0, s_ = 0;
};

using Ids = std::vector<JobId>;
using Page = std::pair<Ids, int64_t>;

TEST_P(ListingTest, FiltersByAnyOfSeveralStates) {
  EXPECT_EQ(List({JobState::kDead, JobState::kRetryable}), Page(Ids{r_, d_}, 2));
  EXPECT_EQ(List({JobState::kRetryable, JobState::kDead, JobState::kDead}), Page(Ids{r_, d_}, 2))
      << "a state named twice lists its jobs once";
  // States read through different indexes on SQLite (the claim path's and
  // the others'), merged newest first.
  EXPECT_EQ(List({JobState::kRunning, JobState::kAvailable, JobState::kDead}),
            Page(Ids{o_, a_, n_, d_}, 4));
  EXPECT_EQ(List({JobState::kAvailable, JobState::kScheduled}), Page(Ids{s_, o_, a_}, 3));
  EXPECT_EQ(List({JobState::kExpired}), Page(Ids{}, 0));
}

TEST_P(ListingTest, FiltersByTaskAndQueue) {
  EXPECT_EQ(List({}, 100, "u"), Page(Ids{a_}, 1));
  EXPECT_EQ(List({JobState::kAvailable}, 100, "t"), Page(Ids{o_}, 1));
  EXPECT_EQ(List({JobState::kAvailable}, 100, "t", "default"), Page(Ids{}, 0));
  EXPECT_EQ(List({}, 100, "t", "default"), Page(Ids{s_, n_, r_, d_}, 4));
  EXPECT_EQ(List({}, 100, "nosuchtask"), Page(Ids{}, 0));
}

TEST_P(ListingTest, TotalCountsEveryMatchNotOnlyThePage) {
  EXPECT_EQ(List({}, 2), Page(Ids{s_, o_}, 6));
  EXPECT_EQ(List({}, 6), Page(Ids{s_, o_, a_, n_, r_, d_}, 6));
  EXPECT_EQ(List({JobState::kRunning, JobState::kAvailable, JobState::kDead}, 1),
            Page(Ids{o_}, 4));
  EXPECT_EQ(List({}, 1, "t"), Page(Ids{s_}, 5));
}

TEST_P(ListingTest, JobsCarryTheirWorkersNameAndLastErrorMessage) {
  JobFilter f;
  auto list = store_->JobList(f, nullptr);
  ASSERT_TRUE(list.has_value()) << list.error().ToString();
  std::map<JobId, JobInfo> by_id;
  for (const JobInfo& j : *list) by_id[j.id] = j;
  EXPECT_EQ(by_id[n_].worker_name, "box-1");
  EXPECT_EQ(by_id[d_].last_error, ErrorKind::kError);
  EXPECT_EQ(by_id[d_].last_error_message, "disk full\non /var") << "whole, as stored";
  EXPECT_EQ(by_id[r_].last_error_message, "S3 said 503");
  EXPECT_EQ(by_id[a_].worker_name, "");
  EXPECT_EQ(by_id[a_].last_error_message, "");

  auto dead = store_->JobGet(d_);
  ASSERT_TRUE(dead.has_value()) << dead.error().ToString();
  EXPECT_EQ(dead->worker_name, "box-1");
  EXPECT_EQ(dead->last_error_message, "disk full\non /var");
  ASSERT_EQ(dead->attempts.size(), 1u);
  EXPECT_EQ(dead->attempts[0].worker_name, "box-1");
  auto running = store_->JobGet(n_);
  ASSERT_TRUE(running.has_value()) << running.error().ToString();
  ASSERT_EQ(running->attempts.size(), 1u);
  EXPECT_EQ(running->attempts[0].worker_name, "box-1") << "the attempt in progress too";

  // Cancelled while it waited for its retry: the earlier failure's message
  // is not about the cancel.
  ASSERT_EQ(store_->JobCancel(r_, {}).value(), JobState::kCancelled);
  auto cancelled = store_->JobGet(r_);
  ASSERT_TRUE(cancelled.has_value());
  EXPECT_EQ(cancelled->last_error, ErrorKind::kCancelled);
  EXPECT_EQ(cancelled->last_error_message, "");
  EXPECT_EQ(cancelled->attempts.at(0).error->message, "S3 said 503") << "the attempt keeps it";
}

INSTANTIATE_TEST_SUITE_P(AllBackends, ListingTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return info.param.name; });

TEST_P(StoreTest, NextDueIsRelativeToTheStoreClock) {
  EXPECT_FALSE(store_->JobNextDueIn().value().has_value()) << "nothing scheduled";
  JobSpec s = Spec();
  s.delay = seconds(30);
  Add(s);
  auto due = store_->JobNextDueIn();
  ASSERT_TRUE(due.has_value() && due->has_value());
  EXPECT_EQ(**due, seconds(30));
  clock_.Advance(seconds(40));
  EXPECT_EQ(**store_->JobNextDueIn(), Millis(0)) << "overdue is due now, not negative";
}

// Whether `session` becomes readable within `ms` and Drain then says woken.
bool WokenWithin(WorkerSession& session, int ms) {
  pollfd fd{session.fd(), POLLIN, 0};
  if (fd.fd < 0 || poll(&fd, 1, ms) != 1) return false;
  auto woken = session.Drain();
  return woken.has_value() && *woken;
}

TEST_P(StoreTest, EnqueueAndNotifyWakeAnIdleWorkerSession) {
  const WorkerId w = RegisterWorker();
  auto session = store_->OpenSession(w, seconds(10));
  ASSERT_TRUE(session.has_value()) << session.error().ToString();
  (void)(*session)->Drain();  // a fresh session may report itself woken once
  EXPECT_FALSE(WokenWithin(**session, 50)) << "nothing happened yet";

  auto other = OpenAnother();  // another process enqueues
  JobSpec spec = Spec();
  ASSERT_TRUE(other->JobInsertMany(std::span<const JobSpec>(&spec, 1)).has_value());
  EXPECT_TRUE(WokenWithin(**session, 5000)) << "an insert wakes idle workers at once";

  other->NotifyWorkers();
  EXPECT_TRUE(WokenWithin(**session, 5000)) << "so does an explicit notify";
}

INSTANTIATE_TEST_SUITE_P(AllBackends, StoreTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace warden::testing
