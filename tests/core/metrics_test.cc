#include "core/metrics.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/retry.h"

namespace warden {
namespace {

TEST(MetricsTest, CountersAddUpBySeriesAndLabelsAreEscaped) {
  Metrics m;
  m.Count(kJobsCompleted, {{"queue", "q"}, {"outcome", "succeeded"}});
  m.Count(kJobsCompleted, {{"queue", "q"}, {"outcome", "succeeded"}}, 2);
  m.Count(kJobsCompleted, {{"queue", "a\"b\\c\nd"}, {"outcome", "dead"}});
  const MetricSnapshot s = m.Snapshot();
  EXPECT_EQ(s.at(R"(warden_jobs_completed_total{queue="q",outcome="succeeded"})"), 3);
  EXPECT_EQ(s.at(R"(warden_jobs_completed_total{queue="a\"b\\c\nd",outcome="dead"})"), 1);
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithSumAndCount) {
  Metrics m;
  m.Observe(kJobRun, {{"queue", "q"}}, 0.003);   // le 0.005
  m.Observe(kJobRun, {{"queue", "q"}}, 0.005);   // le 0.005: bounds are inclusive
  m.Observe(kJobRun, {{"queue", "q"}}, 7200);    // only +Inf
  const MetricSnapshot s = m.Snapshot();
  EXPECT_EQ(s.at(R"(warden_job_run_seconds_bucket{queue="q",le="0.001"})"), 0);
  EXPECT_EQ(s.at(R"(warden_job_run_seconds_bucket{queue="q",le="0.005"})"), 2);
  EXPECT_EQ(s.at(R"(warden_job_run_seconds_bucket{queue="q",le="3600"})"), 2);
  EXPECT_EQ(s.at(R"(warden_job_run_seconds_bucket{queue="q",le="+Inf"})"), 3);
  EXPECT_EQ(s.at(R"(warden_job_run_seconds_count{queue="q"})"), 3);
  EXPECT_DOUBLE_EQ(s.at(R"(warden_job_run_seconds_sum{queue="q"})"), 7200.008);
}

TEST(MetricsTest, ObservingManyAtOnceIsObservingEachInTurn) {
  // The worker counts a batch of outcomes with one ObserveMany per queue.
  const std::vector<double> seconds = {0.003, 0.005, 0.2, 7200, 0};
  Metrics one, many;
  for (const double s : seconds) one.Observe(kJobRun, {{"queue", "q"}}, s);
  many.ObserveMany(kJobRun, {{"queue", "q"}}, seconds);
  EXPECT_EQ(many.Snapshot(), one.Snapshot());
  const uint64_t v = many.version();
  many.ObserveMany(kJobRun, {{"queue", "q"}}, {});
  EXPECT_EQ(many.version(), v);  // nothing observed, nothing to write
}

TEST(MetricsTest, VersionMovesOnlyWhenSomethingWasCounted) {
  Metrics m;
  const uint64_t v0 = m.version();
  (void)m.Snapshot();
  EXPECT_EQ(m.version(), v0);
  m.Count(kJobsRescued, {{"cause", "release"}});
  EXPECT_NE(m.version(), v0);
}

TEST(MetricsTest, SnapshotsSurviveJsonAndDamagedTextReadsAsEmpty) {
  Metrics m;
  m.Count(kJobsRescued, {{"cause", "proven_death"}}, 4);
  m.Observe(kRecovery, {{"cause", "proven_death"}}, 0.0015);
  const MetricSnapshot s = m.Snapshot();
  EXPECT_EQ(SnapshotFromJson(SnapshotToJson(s)), s);
  EXPECT_TRUE(SnapshotFromJson("").empty());
  EXPECT_TRUE(SnapshotFromJson("[1,2]").empty());
  EXPECT_TRUE(SnapshotFromJson("{\"a\":").empty());
  // A value that is not a number is left out, the rest kept.
  const MetricSnapshot mixed = SnapshotFromJson(R"({"x": "1", "y": 2})");
  EXPECT_EQ(mixed.size(), 1u);
  EXPECT_EQ(mixed.at("y"), 2);
}

TEST(MetricsTest, SnapshotsAddUpSeriesBySeries) {
  MetricSnapshot a = {{"x", 1}, {"y", 2}};
  AddSnapshot(a, {{"y", 3}, {"z", 4}});
  EXPECT_EQ(a, (MetricSnapshot{{"x", 1}, {"y", 5}, {"z", 4}}));
}

TEST(MetricsTest, RenderGroupsFamiliesWithHelpTypeAndOrderedBuckets) {
  Metrics m;
  m.Observe(kJobWait, {{"queue", "b"}}, 20);
  m.Observe(kJobWait, {{"queue", "a"}}, 0.2);
  MetricSnapshot s = m.Snapshot();
  s["warden_jobs_enqueued_total"] = 7;
  s["something_unknown"] = 1.5;
  const std::string text = RenderMetrics(s);
  // Each family once, HELP then TYPE, before its series.
  EXPECT_EQ(text.find("# TYPE warden_job_wait_seconds histogram"),
            text.rfind("# TYPE warden_job_wait_seconds histogram"));
  EXPECT_LT(text.find("# HELP warden_job_wait_seconds "),
            text.find("warden_job_wait_seconds_bucket{"));
  EXPECT_NE(text.find("# TYPE warden_jobs_enqueued_total counter\nwarden_jobs_enqueued_total 7\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE something_unknown untyped\nsomething_unknown 1.5\n"),
            std::string::npos);
  // Buckets by number, not as text ("10" after "5", "+Inf" last), then
  // _sum and _count, each queue's together.
  const size_t le5 = text.find(R"(warden_job_wait_seconds_bucket{queue="a",le="5"})");
  const size_t le10 = text.find(R"(warden_job_wait_seconds_bucket{queue="a",le="10"})");
  const size_t inf = text.find(R"(warden_job_wait_seconds_bucket{queue="a",le="+Inf"})");
  const size_t sum = text.find(R"(warden_job_wait_seconds_sum{queue="a"})");
  const size_t count = text.find(R"(warden_job_wait_seconds_count{queue="a"})");
  const size_t b = text.find(R"(warden_job_wait_seconds_bucket{queue="b")");
  ASSERT_NE(le5, std::string::npos);
  EXPECT_LT(le5, le10);
  EXPECT_LT(le10, inf);
  EXPECT_LT(inf, sum);
  EXPECT_LT(sum, count);
  EXPECT_LT(count, b);
}

// A sum of many attempts' seconds (0.001 at a time, and summed again across
// workers) carries binary noise in its last digits: printed as the decimal
// it stands for, never 11.873999999999999 (issue 35).
TEST(MetricsTest, ValuesArePrintedWithoutFloatingPointNoise) {
  Metrics m;
  std::vector<double> runs(11'874, 0.001);
  m.ObserveMany(kJobRun, {{"queue", "q"}}, runs);
  MetricSnapshot s = m.Snapshot();
  ASSERT_NE(s[R"(warden_job_run_seconds_sum{queue="q"})"], 11.874) << "no noise to print";
  s["point_three"] = 0.1 + 0.2;
  s["small"] = 0.000125;
  s["exact"] = 1.5;
  s["big"] = 123456789012.25;
  const std::string text = RenderMetrics(s);
  EXPECT_NE(text.find("warden_job_run_seconds_sum{queue=\"q\"} 11.874\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\npoint_three 0.3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nsmall 0.000125\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nexact 1.5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nbig 123456789012.25\n"), std::string::npos) << text;
}

TEST(MetricsTest, WorkerFamiliesMirrorTheJobPathsUnderTheirOwnNames) {
  const MetricFamily* fleet = FindMetricFamily(kJobRun);
  const MetricFamily* own = FindMetricFamily("warden_worker_job_run_seconds");
  ASSERT_NE(fleet, nullptr);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->type, MetricType::kHistogram);
  EXPECT_EQ(own->buckets, fleet->buckets);
  EXPECT_EQ(FindMetricFamily("warden_worker_jobs_rescued_total")->type, MetricType::kCounter);
}

TEST(MetricsTest, CountsFromManyThreadsAreAllKept) {
  Metrics m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&m] {
      for (int i = 0; i < 1000; ++i) {
        m.Count(kJobsCompleted, {{"queue", "q"}, {"outcome", "succeeded"}});
        m.Observe(kJobRun, {{"queue", "q"}}, 0.01);
      }
    });
  }
  for (auto& t : threads) t.join();
  const MetricSnapshot s = m.Snapshot();
  EXPECT_EQ(s.at(R"(warden_jobs_completed_total{queue="q",outcome="succeeded"})"), 4000);
  EXPECT_EQ(s.at(R"(warden_job_run_seconds_count{queue="q"})"), 4000);
}

// The worker's label for an attempt is the store's verdict, foreseen.
TEST(PredictFailureTest, MatchesTheStoresVerdictFromTheJobAsClaimed) {
  JobInfo job;
  job.max_attempts = 3;
  job.max_crashes = 2;
  job.charged = 0;
  EXPECT_EQ(PredictFailure(job, ErrorKind::kError, true).next, JobState::kRetryable);
  job.charged = 2;  // this is the third charged attempt
  EXPECT_EQ(PredictFailure(job, ErrorKind::kError, true).next, JobState::kDead);
  job.charged = 0;
  job.crashes = 1;  // the second crash reaches max_crashes
  const FailureDecision d = PredictFailure(job, ErrorKind::kCrash, true);
  EXPECT_EQ(d.next, JobState::kDead);
  EXPECT_EQ(d.kind, ErrorKind::kCrashLoop);
  EXPECT_EQ(PredictFailure(job, ErrorKind::kCancelled, true).next, JobState::kCancelled);
}

}  // namespace
}  // namespace warden
