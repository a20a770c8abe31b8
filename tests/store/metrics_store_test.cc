// The metrics' store methods, on every backend: the totals add up every
// worker row's snapshot and the store's own counts, never go down when
// Prune deletes rows, and a rescue says what became of each job (which the
// sweeper counts).
#include <gtest/gtest.h>

#include "store_fixture.h"

namespace warden::testing {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

class MetricsStoreTest : public StoreTest {
 protected:
  double Total(const std::string& series) {
    auto totals = store_->MetricTotals();
    if (!totals.has_value()) {
      ADD_FAILURE() << totals.error().ToString();
      return -1;
    }
    auto it = totals->find(series);
    return it == totals->end() ? 0 : it->second;
  }
  // A completion with a stale lease token: refused and logged as fenced.
  void FencedWrite(WorkerId w) {
    const JobId id = Add(Spec());
    auto claimed = Claim(w, 1);
    ASSERT_EQ(claimed.size(), 1u);
    JobOutcome stale{JobRef{id, claimed[0].lease_token + 100}, true, Json(), {}};
    ASSERT_EQ(store_->JobFinishMany(w, std::span(&stale, 1)).value(), std::vector<bool>{false});
    JobOutcome ok{JobRef{id, claimed[0].lease_token}, true, Json(), {}};
    ASSERT_EQ(store_->JobFinishMany(w, std::span(&ok, 1)).value(), std::vector<bool>{true});
  }
};

TEST_P(MetricsStoreTest, TotalsAddEveryWorkersSnapshotAndTheStoresOwnCounts) {
  const WorkerId a = RegisterWorker("a");
  const WorkerId b = RegisterWorker("b");
  EXPECT_EQ(Total("warden_jobs_enqueued_total"), 0);
  EXPECT_EQ(Total(kFencedWrites), 0);
  ASSERT_TRUE(store_->WorkerPutMetrics(a, R"({"x": 1, "y{q=\"1\"}": 2.5})").ok());
  ASSERT_TRUE(store_->WorkerPutMetrics(b, R"({"x": 3})").ok());
  EXPECT_EQ(Total("x"), 4);
  EXPECT_EQ(Total("y{q=\"1\"}"), 2.5);
  // A snapshot replaces the worker's last one (it is cumulative).
  ASSERT_TRUE(store_->WorkerPutMetrics(a, R"({"x": 5})").ok());
  EXPECT_EQ(Total("x"), 8);
  EXPECT_EQ(Total("y{q=\"1\"}"), 0);

  FencedWrite(a);
  EXPECT_EQ(Total(kFencedWrites), 1);
  Add(Spec());
  EXPECT_EQ(Total("warden_jobs_enqueued_total"), 2);
  // A unique key's duplicate is not a new job (PostgreSQL's sequence
  // counts it: docs/metrics.md).
  if (!GetParam().postgres) {
    JobSpec s = Spec();
    s.unique_key = "k";
    Add(s);
    Add(s);
    EXPECT_EQ(Total("warden_jobs_enqueued_total"), 3);
  }
  // Another connection (a `warden serve`) reads the same totals.
  auto other = OpenAnother();
  EXPECT_EQ(other->MetricTotals().value().at("x"), 8);
}

TEST_P(MetricsStoreTest, PruningRowsKeepsWhatTheyCounted) {
  const WorkerId a = RegisterWorker("a");
  const WorkerId b = RegisterWorker("b");
  FencedWrite(a);
  ASSERT_TRUE(store_->WorkerPutMetrics(a, R"({"x": 4, "h_bucket{le=\"+Inf\"}": 2})").ok());
  ASSERT_TRUE(store_->WorkerPutMetrics(b, R"({"x": 1})").ok());
  ASSERT_TRUE(store_->WorkerStop(a).ok());
  clock_.Advance(hours(25));
  ASSERT_TRUE(store_->WorkerHeartbeat(b).has_value());
  ASSERT_TRUE(store_->Prune(hours(24)).has_value());

  // a's row and the fenced-write record are gone; their counts are not.
  const auto workers = store_->WorkerList(false).value();
  for (const WorkerInfo& w : workers) EXPECT_NE(w.id, a);
  EXPECT_EQ(store_->GetStats()->fenced_writes, 0);
  EXPECT_EQ(Total("x"), 5);
  EXPECT_EQ(Total("h_bucket{le=\"+Inf\"}"), 2);
  EXPECT_EQ(Total(kFencedWrites), 1);

  // Pruning again adds nothing twice; b counts on.
  ASSERT_TRUE(store_->Prune(hours(24)).has_value());
  ASSERT_TRUE(store_->WorkerPutMetrics(b, R"({"x": 2})").ok());
  EXPECT_EQ(Total("x"), 6);
  EXPECT_EQ(Total(kFencedWrites), 1);
  FencedWrite(b);
  EXPECT_EQ(Total(kFencedWrites), 2);
}

TEST_P(MetricsStoreTest, CountsWithoutAWorkerRowAddToTheTotals) {
  const WorkerId a = RegisterWorker("a");
  ASSERT_TRUE(store_->WorkerPutMetrics(a, R"({"x": 1})").ok());
  ASSERT_TRUE(store_->MetricsAdd({{"x", 2}, {"r{cause=\"operator\"}", 1}}).ok());
  ASSERT_TRUE(store_->MetricsAdd({{"r{cause=\"operator\"}", 0.5}}).ok());
  ASSERT_TRUE(store_->MetricsAdd({}).ok());
  EXPECT_EQ(Total("x"), 3);
  EXPECT_EQ(Total("r{cause=\"operator\"}"), 1.5);
}

TEST_P(MetricsStoreTest, ARescueSaysWhatBecameOfEachJob) {
  JobSpec poison = Spec();
  poison.queue = "media";
  poison.max_crashes = 1;  // its first loss quarantines it
  const JobId p = Add(poison);
  JobSpec plain = Spec();
  plain.queue = "email";
  const JobId e = Add(plain);
  const WorkerId w = RegisterWorker("w");
  ClaimParams params;
  params.worker = w;
  params.tasks = {"t"};
  params.limit = 10;
  ASSERT_EQ(store_->JobClaim(params).value().size(), 2u);

  auto report = store_->WorkerDeclareDead(w, "test: killed", LossCause::kProvenDeath, nullptr);
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->rescued, 2);
  ASSERT_EQ(report->jobs.size(), 2u);
  std::map<JobId, RescuedJob> by_id;
  for (const RescuedJob& j : report->jobs) by_id[j.id] = j;
  EXPECT_EQ(by_id[p].queue, "media");
  EXPECT_EQ(by_id[p].next, JobState::kDead);
  EXPECT_EQ(by_id[p].kind, ErrorKind::kCrashLoop);
  EXPECT_EQ(by_id[e].queue, "email");
  EXPECT_EQ(by_id[e].next, JobState::kRetryable) << "retried (at once: a first loss)";
  EXPECT_EQ(by_id[e].kind, ErrorKind::kLost);

  // The same from a lease judged silent.
  const WorkerId v = RegisterWorker("v");
  clock_.Advance(seconds(1));
  ASSERT_TRUE(store_->JobPromote().has_value());
  params.worker = v;
  params.default_lease = seconds(5);
  ASSERT_EQ(store_->JobClaim(params).value().size(), 1u);
  clock_.Advance(seconds(6));
  auto silent = store_->JobRescueSilent(store_->JobLeases().value());
  ASSERT_TRUE(silent.has_value());
  ASSERT_EQ(silent->jobs.size(), 1u);
  EXPECT_EQ(silent->jobs[0].id, e);
  EXPECT_EQ(silent->jobs[0].queue, "email");
  EXPECT_EQ(silent->jobs[0].next, JobState::kRetryable);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, MetricsStoreTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace warden::testing
