// The kept job counts (Store::JobCountsFold, docs/metrics.md) on every
// backend: after every kind of change a job can go through (insert, unique
// duplicate, claim, start mark, success, failure to retryable and to dead,
// crash loop, release, cancel pending and running, retry by hand, promote,
// expire, rescue by lease and by a proven death, a worker's goodbye
// holding jobs, delete, bulk retry/cancel/delete, prune), what QueueList,
// GetStats and JobCountUnfinished say equals a real count of the jobs
// (JobList's total, one count(*) per queue and state), each queue's oldest
// available job is the real one, and JobCountsVerify finds no drift. And
// JobBacklog, which reads the counts by group (schema SQLite 11 / PostgreSQL
// 13) instead of every waiting job, says what a GROUP BY of the jobs says.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "store_fixture.h"

namespace warden::testing {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

constexpr JobState kAllStates[] = {JobState::kScheduled, JobState::kAvailable,
                                   JobState::kRunning,   JobState::kSucceeded,
                                   JobState::kRetryable, JobState::kDead,
                                   JobState::kCancelled, JobState::kExpired};

class JobCountsStoreTest : public StoreTest {
 protected:
  // Every count the store keeps against a count of the jobs themselves.
  void ExpectExact(const std::string& step) {
    SCOPED_TRACE(step);
    auto drift = store_->JobCountsVerify();
    ASSERT_TRUE(drift.has_value()) << drift.error().ToString();
    for (const JobCountDrift& d : *drift) {
      ADD_FAILURE() << "drift in " << d.queue << "/" << d.task << (d.command ? " (cmd)" : "")
                    << "/" << d.state << ": kept " << d.kept << ", real " << d.real;
    }
    auto queues = store_->QueueList();
    ASSERT_TRUE(queues.has_value()) << queues.error().ToString();
    std::map<std::string, const QueueInfo*> by_name;
    for (const QueueInfo& q : *queues) by_name[q.name] = &q;
    std::map<std::string, int64_t> by_state;
    int64_t unfinished = 0;
    for (const std::string& queue : queues_) {
      std::optional<TimeMs> oldest;
      for (JobState s : kAllStates) {
        JobFilter f;
        f.queue = queue;
        f.states = {s};
        f.limit = 1000;
        int64_t real = 0;
        auto list = store_->JobList(f, &real);
        ASSERT_TRUE(list.has_value()) << list.error().ToString();
        if (s == JobState::kAvailable) {
          for (const JobInfo& j : *list) oldest = std::min(oldest.value_or(j.run_at), j.run_at);
        }
        const QueueInfo* q = by_name.count(queue) ? by_name[queue] : nullptr;
        EXPECT_EQ(q ? q->CountIn(s) : 0, real) << queue << "/" << JobStateName(s);
        by_state[JobStateName(s)] += real;
        if (s == JobState::kScheduled || s == JobState::kAvailable || s == JobState::kRunning ||
            s == JobState::kRetryable) {
          unfinished += real;
        }
      }
      const QueueInfo* q = by_name.count(queue) ? by_name[queue] : nullptr;
      EXPECT_EQ(q ? q->oldest_available_at : std::nullopt, oldest) << queue;
      // A queue is listed with the states it has jobs in, as before the
      // counts were kept (a count fallen to 0 is not shown).
      if (q) {
        for (const auto& [state, n] : q->jobs) EXPECT_GT(n, 0) << queue << "/" << state;
      }
    }
    auto stats = store_->GetStats();
    ASSERT_TRUE(stats.has_value()) << stats.error().ToString();
    std::map<std::string, int64_t> kept(stats->jobs.begin(), stats->jobs.end());
    for (const auto& [state, n] : by_state) {
      EXPECT_EQ(kept.count(state) ? kept[state] : 0, n) << "GetStats " << state;
    }
    EXPECT_EQ(store_->JobCountUnfinished().value(), unfinished);
    ExpectBacklog({});
    ExpectBacklog({"a"});
    ExpectBacklog({"a", "b"});
  }

  // JobBacklog(queues) against the jobs themselves, grouped as the old
  // GROUP BY did: count and soonest run_at per (queue, task, command or
  // not, state), running ones only with a worker; available groups carry
  // no run_at (BacklogGroup).
  void ExpectBacklog(const std::vector<std::string>& only) {
    SCOPED_TRACE("backlog of " + std::to_string(only.size()) + " queues");
    using Key = std::tuple<std::string, std::string, bool, std::string>;
    std::map<Key, std::pair<int64_t, TimeMs>> real;
    for (const std::string& queue : queues_) {
      if (!only.empty() && std::find(only.begin(), only.end(), queue) == only.end()) continue;
      for (JobState s : {JobState::kAvailable, JobState::kScheduled, JobState::kRetryable,
                         JobState::kRunning}) {
        JobFilter f;
        f.queue = queue;
        f.states = {s};
        f.limit = 1000;
        auto list = store_->JobList(f, nullptr);
        ASSERT_TRUE(list.has_value()) << list.error().ToString();
        for (const JobInfo& j : *list) {
          if (s == JobState::kRunning && !j.worker) continue;
          auto [it, fresh] = real.try_emplace(
              Key{j.queue, j.task, !j.command.empty(), JobStateName(s)}, 0, j.run_at);
          ++it->second.first;
          it->second.second = std::min(it->second.second, j.run_at);
        }
      }
    }
    auto backlog = store_->JobBacklog(only);
    ASSERT_TRUE(backlog.has_value()) << backlog.error().ToString();
    std::map<Key, std::pair<int64_t, TimeMs>> got;
    int last_part = 0;
    for (const BacklogGroup& g : *backlog) {
      const int part = g.state == JobState::kAvailable ? 0 : g.state == JobState::kRunning ? 2 : 1;
      EXPECT_GE(part, last_part) << "available, then scheduled and retryable, then running";
      last_part = part;
      const bool fresh =
          got.emplace(Key{g.queue, g.task, g.command, JobStateName(g.state)},
                      std::pair{g.count, g.next_run_at})
              .second;
      EXPECT_TRUE(fresh) << "group listed twice: " << g.queue << "/" << g.task;
    }
    for (auto& [key, v] : real) {
      if (std::get<3>(key) == "available") v.second = 0;
    }
    EXPECT_EQ(got, real);
  }

  JobId AddTo(const std::string& queue, JobSpec s) {
    s.queue = queue;
    queues_.insert(queue);
    return Add(s);
  }
  std::vector<JobInfo> ClaimFrom(WorkerId w, const std::string& queue, int limit,
                                 Millis lease = seconds(10)) {
    ClaimParams p;
    p.worker = w;
    p.queues = {queue};
    p.tasks = {"t"};
    p.limit = limit;
    p.default_lease = lease;
    auto r = store_->JobClaim(p);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : std::vector<JobInfo>{};
  }
  void Finish(WorkerId w, const std::vector<JobInfo>& jobs, bool success,
              ErrorKind kind = ErrorKind::kError) {
    std::vector<JobOutcome> outs;
    for (const JobInfo& j : jobs) {
      JobOutcome o;
      o.ref = JobRef{j.id, j.lease_token};
      o.success = success;
      o.error.kind = kind;
      o.error.message = "boom";
      outs.push_back(o);
    }
    auto r = store_->JobFinishMany(w, outs);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
  }
  void RunBulk(BulkAction action, const JobFilter& f) {
    auto op = store_->BulkOpCreate(action, f, "test", {});
    ASSERT_TRUE(op.has_value()) << op.error().ToString();
    auto mine = store_->BulkOpClaim("runner", seconds(30), op->id);
    ASSERT_TRUE(mine.has_value()) << mine.error().ToString();
    if (!mine->has_value()) return;  // nothing to do: done at its creation
    for (int i = 0; i < 100; ++i) {
      auto step = store_->BulkOpStep(op->id, "runner", 2, seconds(30));
      ASSERT_TRUE(step.has_value()) << step.error().ToString();
      ExpectExact(std::string("bulk ") + BulkActionName(action) + " batch");
      if (step->state != BulkState::kRunning) return;
    }
    ADD_FAILURE() << "the bulk operation did not end";
  }

  std::set<std::string> queues_ = {"default"};
};

TEST_P(JobCountsStoreTest, EveryTransitionKeepsTheCountsExact) {
  ExpectExact("empty");
  // Inserts: available, scheduled, priorities (the oldest available job is
  // of the lowest priority, so the probe must look past the first), unique
  // duplicates (no new job).
  JobSpec s = Spec();
  for (int i = 0; i < 3; ++i) AddTo("a", s);
  clock_.Advance(seconds(1));
  JobSpec high = Spec();
  high.priority = 5;
  AddTo("a", high);
  JobSpec later = Spec();
  later.delay = hours(1);
  const JobId scheduled = AddTo("b", later);
  JobSpec uniq = Spec();
  uniq.unique_key = "u";
  const JobId u = AddTo("b", uniq);
  EXPECT_EQ(AddTo("b", uniq), u);
  JobSpec deadline = Spec();
  deadline.start_deadline = seconds(5);
  AddTo("c", deadline);
  // Other groups of the same queues: another task, command jobs (no worker
  // here claims them), scheduled and available.
  AddTo("a", Spec("u"));
  JobSpec u_later = Spec("u");
  u_later.delay = hours(3);
  AddTo("a", u_later);
  u_later.delay = hours(1);
  AddTo("a", u_later);
  JobSpec cmd = Spec("sh");
  cmd.command = "true";
  AddTo("a", cmd);
  cmd.delay = hours(1);
  AddTo("b", cmd);
  ExpectExact("inserted");

  // Claim, at-most-once start mark, success, failure to retryable and dead.
  const WorkerId w = RegisterWorker("w");
  auto run = ClaimFrom(w, "a", 2);
  ASSERT_EQ(run.size(), 2u);
  EXPECT_EQ(run[0].priority, 5);
  ExpectExact("claimed");
  ASSERT_TRUE(store_->JobMarkStarted(JobRef{run[0].id, run[0].lease_token}).value());
  Finish(w, {run[0]}, true);
  ExpectExact("succeeded");
  Finish(w, {run[1]}, false);
  ExpectExact("failed, retryable");
  // A fenced-off write changes nothing.
  Finish(w, {run[1]}, true);
  ExpectExact("fenced");
  JobSpec once = Spec();
  once.max_attempts = 1;
  AddTo("d", once);
  auto one = ClaimFrom(w, "d", 1);
  ASSERT_EQ(one.size(), 1u);
  Finish(w, one, false);
  ExpectExact("failed, dead");

  // Crash loop: max_crashes crashes quarantine the job (dead, crash_loop).
  JobSpec crashy = Spec();
  crashy.max_crashes = 1;
  crashy.max_attempts = 10;
  AddTo("e", crashy);
  auto crash = ClaimFrom(w, "e", 1);
  ASSERT_EQ(crash.size(), 1u);
  Finish(w, crash, false, ErrorKind::kCrash);
  ExpectExact("crash loop");
  EXPECT_EQ(store_->GetStats()->crash_loops, 1);
  // A graceful shutdown's release: available again, no attempt charged.
  auto released = ClaimFrom(w, "a", 1);
  ASSERT_EQ(released.size(), 1u);
  Finish(w, released, false, ErrorKind::kReleased);
  ExpectExact("released");

  // Promote (retryable and scheduled come due), expire (start deadline).
  clock_.Advance(hours(2));
  EXPECT_GE(store_->JobPromote().value(), 2);
  ExpectExact("promoted");
  EXPECT_EQ(store_->JobGet(scheduled)->state, JobState::kAvailable);
  EXPECT_EQ(store_->JobExpire().value(), 1);
  ExpectExact("expired");

  // Cancel: a pending job at once; a running one when its worker stops it.
  EXPECT_EQ(store_->JobCancel(u, {}).value(), JobState::kCancelled);
  ExpectExact("cancelled pending");
  auto cancelled = ClaimFrom(w, "b", 1);
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(store_->JobCancel(cancelled[0].id, {}).value(), JobState::kRunning);
  ExpectExact("cancel requested");
  Finish(w, cancelled, false, ErrorKind::kCancelled);
  ExpectExact("cancelled running");
  // Retry by hand: cancelled, dead and a waiting job.
  ASSERT_TRUE(store_->JobRetry(u, {}, {}).ok());
  ASSERT_TRUE(store_->JobRetry(crash[0].id, {}, {}).ok());
  ExpectExact("retried");

  // Rescue: an expired lease; a worker proven dead; a goodbye holding jobs.
  auto silent = ClaimFrom(w, "a", 1, seconds(5));
  ASSERT_EQ(silent.size(), 1u);
  clock_.Advance(seconds(6));
  auto leases = store_->JobLeases();
  ASSERT_TRUE(leases.has_value());
  EXPECT_EQ(store_->JobRescueSilent(*leases)->rescued, 1);
  ExpectExact("rescued by lease");
  const WorkerId dying = RegisterWorker("dying");
  ASSERT_EQ(ClaimFrom(dying, "a", 2).size(), 2u);
  ASSERT_TRUE(
      store_->WorkerDeclareDead(dying, "killed", LossCause::kProvenDeath, nullptr).has_value());
  ExpectExact("rescued from a dead worker");
  const WorkerId leaving = RegisterWorker("leaving");
  ASSERT_EQ(ClaimFrom(leaving, "b", 1).size(), 1u);
  ASSERT_TRUE(store_->WorkerStop(leaving).ok());
  ExpectExact("goodbye holding a job");

  // Finish everything left in `a` so there is something to delete and prune.
  const WorkerId w2 = RegisterWorker("w2");
  auto rest = ClaimFrom(w2, "a", 100);
  Finish(w2, rest, true);
  ExpectExact("drained a");
  JobFilter done;
  done.states = {JobState::kSucceeded};
  done.queue = "a";
  auto finished = store_->JobList(done, nullptr);
  ASSERT_TRUE(finished.has_value() && !finished->empty());
  ASSERT_TRUE(store_->JobDelete(finished->front().id, AuditEntry{0, 0, "t", "job.delete", "", 1})
                  .ok());
  ExpectExact("deleted");

  // Bulk operations, in batches of two.
  for (int i = 0; i < 5; ++i) AddTo("f", once);
  auto doomed = ClaimFrom(w2, "f", 5);
  Finish(w2, doomed, false);
  ExpectExact("five dead");
  JobFilter dead;
  dead.states = {JobState::kDead};
  dead.queue = "f";
  RunBulk(BulkAction::kRetry, dead);
  JobFilter f;
  f.queue = "f";
  RunBulk(BulkAction::kCancel, f);
  RunBulk(BulkAction::kDelete, f);
  ExpectExact("bulk done");

  // Prune: finished jobs past the retention go, live ones stay.
  clock_.Advance(hours(24 * 30));
  auto pruned = store_->Prune(hours(24));
  ASSERT_TRUE(pruned.has_value()) << pruned.error().ToString();
  EXPECT_GT(*pruned, 0);
  ExpectExact("pruned");
  // Folding changes no count (a no-op but on PostgreSQL).
  ASSERT_TRUE(store_->JobCountsFold().ok());
  ExpectExact("folded");
}

// Another process's view: counts written through one connection are read
// exactly through another, and concurrent changes from both add up.
TEST_P(JobCountsStoreTest, TwoConnectionsSeeTheSameCounts) {
  auto other = OpenAnother();
  ASSERT_NE(other, nullptr);
  for (int i = 0; i < 20; ++i) {
    JobSpec s = Spec();
    s.queue = i % 2 ? "x" : "y";
    queues_.insert(s.queue);
    ASSERT_TRUE((i % 3 ? store_ : other)->JobInsertMany(std::span(&s, 1)).has_value());
  }
  const WorkerId w = RegisterWorker("w");
  auto a = ClaimFrom(w, "x", 4);
  Finish(w, a, true);
  ASSERT_TRUE(other->JobCountsFold().ok());
  ExpectExact("two connections");
  auto theirs = other->QueueList().value();
  auto ours = store_->QueueList().value();
  ASSERT_EQ(theirs.size(), ours.size());
  for (size_t i = 0; i < ours.size(); ++i) EXPECT_EQ(theirs[i].jobs, ours[i].jobs);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, JobCountsStoreTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace warden::testing
