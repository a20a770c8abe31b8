// Flow control with real worker processes (issue 22): four `warden worker`s
// of three slots each share a queue limited to two running jobs; a sampler
// reads the store's count of the queue's running jobs all along, and the
// jobs themselves log when their code starts and ends: neither ever shows
// more than two. A rate limit holds across the workers too, judged from
// the claims the store recorded. `warden jobs why` names what holds a job
// back: the jobs running at the limit, or when the window allows the next.
#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "warden/duration.h"

#include "harness.h"

namespace wt {
namespace {

class FlowTest : public IntegrationTest {
 protected:
  void StartWorkers(int n) {
    for (int i = 0; i < n; ++i) {
      std::string name(1, 'w');  // (appended: "w" + text is a false -Wrestrict in g++ 12)
      name += std::to_string(i);
      StartWorker(name, FastFlags({{"--poll-interval", "50ms"}}), 3);
    }
  }
  static std::vector<warden::JobSpec> Commands(int n, const std::string& command) {
    std::vector<warden::JobSpec> specs(n);
    for (warden::JobSpec& s : specs) {
      s.task = std::string("command");
      s.command = command;
    }
    return specs;
  }
  bool AllSucceeded(const std::vector<int64_t>& ids) {
    return std::all_of(ids.begin(), ids.end(),
                       [&](int64_t id) { return JobInState(id, warden::JobState::kSucceeded); });
  }
  // Each job's run as its code saw it: (start, end) in ns of CLOCK_REALTIME.
  std::vector<std::pair<int64_t, int64_t>> Runs() {
    std::map<int64_t, std::pair<int64_t, int64_t>> by_job;
    for (const LedgerLine& l : Ledger()) {
      if (l.args.empty()) continue;
      if (l.event == "start") by_job[l.job].first = std::stoll(l.args[0]);
      if (l.event == "end") by_job[l.job].second = std::stoll(l.args[0]);
    }
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const auto& [job, run] : by_job) out.push_back(run);
    return out;
  }
};

TEST_P(FlowTest, ManyWorkersNeverRunMoreThanTheConcurrencyLimit) {
  CliResult set = Cli({"queues", "limit", "default", "--concurrency", "2"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(set.json["limits"].value("concurrency", 0), 2) << set.out;
  StartWorkers(4);
  const std::vector<int64_t> ids =
      EnqueueMany(Commands(14, Job("log start $(date +%s%N); sleep 0.25; log end $(date +%s%N)")));
  // The sampler: the store's own count, as often as it can read it.
  std::atomic<bool> stop{false};
  std::atomic<int64_t> most{0};
  std::atomic<int> samples{0};
  std::thread sampler([&] {
    auto c = warden::Client::Open(db());
    if (!c.has_value()) return;
    while (!stop) {
      auto flow = (*c)->GetQueueFlow("default");
      if (flow.has_value() && flow->has_value()) {
        most = std::max(most.load(), (*flow)->running);
        ++samples;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const bool finished = WaitFor([&] { return AllSucceeded(ids); }, Millis(60'000));
  stop = true;
  sampler.join();
  ASSERT_TRUE(finished);
  EXPECT_GT(samples.load(), 50);
  EXPECT_EQ(most.load(), 2) << "the store's running count reached the limit and never passed it";

  // The runs themselves: at no instant more than two.
  std::vector<std::pair<int64_t, int>> edges;
  for (const auto& [start, end] : Runs()) {
    ASSERT_GT(start, 0);
    ASSERT_GT(end, start);
    edges.emplace_back(start, +1);
    edges.emplace_back(end, -1);
  }
  ASSERT_EQ(edges.size(), 2 * ids.size());
  std::sort(edges.begin(), edges.end());  // at one instant, an end (-1) before a start
  int at_once = 0, most_runs = 0;
  for (const auto& [t, d] : edges) most_runs = std::max(most_runs, at_once += d);
  EXPECT_EQ(most_runs, 2);
}

TEST_P(FlowTest, ARateLimitHoldsAcrossWorkers) {
  CliResult set = Cli({"queues", "limit", "default", "--rate", "3/1s"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  StartWorkers(3);
  const std::vector<int64_t> ids = EnqueueMany(Commands(9, "true"));
  ASSERT_TRUE(WaitFor([&] { return AllSucceeded(ids); }, Millis(60'000)));
  // Every claim the store recorded: in each window (t - 1s, t], at most 3.
  std::vector<std::string> claims;
  for (int64_t id : ids) {
    const Json job = Show(id);
    for (const Json& a : job["attempts"]) claims.push_back(a.value("claimed_at", ""));
  }
  ASSERT_EQ(claims.size(), ids.size());
  std::vector<int64_t> at;
  for (const std::string& c : claims) {
    auto t = warden::ParseTime(c);
    ASSERT_TRUE(t.has_value()) << c;
    at.push_back(*t);
  }
  std::sort(at.begin(), at.end());
  for (size_t i = 0; i < at.size(); ++i) {
    const auto first = std::upper_bound(at.begin(), at.end(), at[i] - 1000);
    EXPECT_LE(at.begin() + static_cast<int64_t>(i) + 1 - first, 3) << "window ending at " << i;
  }
  EXPECT_GE(at.back() - at.front(), 2000) << "nine claims at three a second span two windows";
}

TEST_P(FlowTest, WhyNamesTheJobsAtTheLimitAndWhenTheWindowOpens) {
  ASSERT_EQ(Cli({"queues", "limit", "default", "--concurrency", "1"}).exit_code, 0);
  StartWorker("w", FastFlags(), 2);
  const int64_t holder = Add(Job("log start; sleep 30"));
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(holder, 1, "start"); }));
  const int64_t waiting = Add("true");
  CliResult why = Cli({"jobs", "why", std::to_string(waiting)});
  ASSERT_EQ(why.exit_code, 0) << why.err;
  const Json& reason = why.json["reasons"][0];
  EXPECT_EQ(reason.value("code", ""), "queue_concurrency_limit") << why.out;
  EXPECT_EQ(reason["evidence"].value("running", 0), 1) << why.out;
  EXPECT_EQ(reason["evidence"]["holders"][0].value("id", 0), holder) << why.out;
  CliResult text = Cli({"jobs", "why", std::to_string(waiting)}, /*json=*/false);
  std::string held = "at its concurrency limit: 1 of 1 running (jobs ";
  held += std::to_string(holder);
  held += " (w)";
  EXPECT_NE(text.out.find(held), std::string::npos)
      << text.out;

  // One start an hour, and no concurrency limit now (a limit command sets
  // exactly what it gives): the window counts claims from when the rate is
  // set, so the waiting job takes the hour's start and a third waits.
  ASSERT_EQ(Cli({"queues", "limit", "default", "--rate", "1/1h"}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return JobInState(waiting, warden::JobState::kSucceeded); }));
  const int64_t third = Add("true");
  EXPECT_TRUE(StaysTrueFor([&] { return JobInState(third, warden::JobState::kAvailable); },
                           Millis(500)));
  why = Cli({"jobs", "why", std::to_string(third)});
  ASSERT_EQ(why.exit_code, 0) << why.err;
  bool rate_reason = false;
  for (const Json& r : why.json["reasons"]) {
    if (r.value("code", "") != "queue_rate_limit") continue;
    rate_reason = true;
    EXPECT_EQ(r["evidence"].value("recent_starts", 0), 1) << why.out;
    EXPECT_EQ(r["evidence"].value("rate", ""), "1/1h") << why.out;
    auto next = warden::ParseTime(r["evidence"].value("next_start_at", ""));
    const Json first = Show(waiting);
    auto claimed = warden::ParseTime(first["attempts"][0].value("claimed_at", ""));
    ASSERT_TRUE(next.has_value() && claimed.has_value()) << why.out;
    EXPECT_EQ(*next, *claimed + 3'600'000) << "an hour after the window's one claim";
  }
  EXPECT_TRUE(rate_reason) << why.out;
}

INSTANTIATE_TEST_SUITE_P(Backends, FlowTest, ::testing::ValuesIn(AllBackends()), BackendName);

}  // namespace
}  // namespace wt
