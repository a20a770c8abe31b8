// Flow control (warden/flow.h) on every backend: a queue's concurrency
// limit is never exceeded, by one claim or by many at once (each with its
// own connection: other processes), claimed-ahead jobs included; its rate
// window is exact (never more than N claims in any window of the interval,
// and never fewer when the window had room); queues without limits claim as
// before; cleared limits are gone.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "store_fixture.h"
#include "warden/flow.h"

namespace warden::testing {
namespace {

class FlowStoreTest : public StoreTest {
 protected:
  static AuditEntry By(const std::string& target) {
    return AuditEntry{0, 0, "cli:test", "queue.limit", target, 0};
  }
  void Limit(const std::string& queue, std::optional<int64_t> concurrency,
             std::optional<RateLimit> rate = std::nullopt, Store* store = nullptr) {
    QueueLimits l;
    l.concurrency = concurrency;
    l.rate = rate;
    auto set = (store ? store : store_.get())->QueueSetLimits(queue, l, By(queue));
    ASSERT_TRUE(set.has_value()) << set.error().ToString();
  }
  void AddTo(const std::string& queue, int n, int priority = 0) {
    std::vector<JobSpec> specs(n, Spec());
    for (JobSpec& s : specs) {
      s.queue = queue;
      s.priority = priority;
    }
    ASSERT_TRUE(store_->JobInsertMany(specs).has_value());
  }
  WorkerId WorkerOn(const std::string& name, std::vector<std::string> queues,
                    Store* store = nullptr) {
    WorkerRegistration r = TestWorker(name);
    r.queues = std::move(queues);
    auto id = (store ? store : store_.get())->WorkerRegister(r);
    EXPECT_TRUE(id.has_value()) << id.error().ToString();
    return id.has_value() ? *id : 0;
  }
  static std::vector<JobInfo> ClaimFrom(Store& store, WorkerId w, std::vector<std::string> queues,
                                        int limit, int ahead = 0) {
    ClaimParams p;
    p.worker = w;
    p.queues = std::move(queues);
    p.tasks = {"t"};
    p.limit = limit;
    p.ahead = ahead;
    auto claimed = store.JobClaim(p);
    if (!claimed.has_value()) {
      ADD_FAILURE() << claimed.error().ToString();
      return {};
    }
    return *claimed;
  }
  std::vector<JobInfo> ClaimFrom(WorkerId w, std::vector<std::string> queues, int limit,
                                 int ahead = 0) {
    return ClaimFrom(*store_, w, std::move(queues), limit, ahead);
  }
  static void Finish(Store& store, WorkerId w, const JobInfo& job) {
    JobOutcome ok;
    ok.ref = JobRef{job.id, job.lease_token};
    ok.success = true;
    auto done = store.JobFinishMany(w, std::span(&ok, 1));
    ASSERT_TRUE(done.has_value()) << done.error().ToString();
    EXPECT_EQ(*done, std::vector<bool>{true});
  }
  int64_t Running(const std::string& queue) {
    const std::vector<QueueInfo> queues = store_->QueueList().value();
    for (const QueueInfo& q : queues) {
      if (q.name == queue) return q.CountIn(JobState::kRunning);
    }
    return 0;
  }
};

TEST_P(FlowStoreTest, AConcurrencyLimitCapsEveryClaimAndFreesAsJobsFinish) {
  Limit("q", 3);
  AddTo("q", 10);
  const WorkerId a = WorkerOn("a", {"q"});
  const WorkerId b = WorkerOn("b", {"q"});
  auto first = ClaimFrom(a, {"q"}, 2);
  ASSERT_EQ(first.size(), 2u);
  auto second = ClaimFrom(b, {"q"}, 10);
  ASSERT_EQ(second.size(), 1u) << "one place left of three";
  EXPECT_TRUE(ClaimFrom(b, {"q"}, 10).empty());
  EXPECT_TRUE(ClaimFrom(*OpenAnother(), a, {"q"}, 10).empty()) << "another connection too";
  EXPECT_EQ(Running("q"), 3);
  Finish(*store_, a, first[0]);
  auto third = ClaimFrom(b, {"q"}, 10);
  EXPECT_EQ(third.size(), 1u) << "a finished job frees one place";
  EXPECT_EQ(Running("q"), 3);
}

// A claimed-ahead job would hold a place while it waits for a slot of its
// worker: a limited queue's jobs are claimed for free slots only (rows of
// it that come for later slots are skipped, as unsafe ones are).
TEST_P(FlowStoreTest, ALimitedQueuesJobsAreNeverClaimedAhead) {
  Limit("q", 5);
  AddTo("q", 10, /*priority=*/5);
  AddTo("free", 10);
  const WorkerId w = WorkerOn("w", {"q", "free"});
  EXPECT_EQ(ClaimFrom(w, {"q"}, 4, /*ahead=*/3).size(), 1u)
      << "one slot free, three ahead: the one slot's job only";
  auto both = ClaimFrom(w, {"q", "free"}, 4, /*ahead=*/2);
  ASSERT_EQ(both.size(), 2u) << "two free slots";
  EXPECT_EQ(both[0].queue, "q");
  EXPECT_EQ(both[1].queue, "q");
  EXPECT_EQ(ClaimFrom(w, {"free"}, 4, /*ahead=*/3).size(), 4u)
      << "an unlimited queue's jobs are claimed ahead as before";
  EXPECT_EQ(Running("q"), 3);
}

// A claim of several queues takes from a limited one at most what it
// allows, and fills the rest from the others, in priority order; a claim of
// every queue too.
TEST_P(FlowStoreTest, AMergedClaimTakesTheLimitedQueuesShareAndFillsFromTheOthers) {
  Limit("hot", 2);
  AddTo("hot", 10, /*priority=*/5);
  AddTo("cold", 10);
  const WorkerId w = WorkerOn("w", {"hot", "cold"});
  auto claimed = ClaimFrom(w, {"hot", "cold"}, 6);
  ASSERT_EQ(claimed.size(), 6u);
  EXPECT_EQ(claimed[0].queue, "hot");
  EXPECT_EQ(claimed[1].queue, "hot");
  for (size_t i = 2; i < claimed.size(); ++i) EXPECT_EQ(claimed[i].queue, "cold") << i;
  auto every = ClaimFrom(w, {}, 6);
  for (const JobInfo& j : every) EXPECT_EQ(j.queue, "cold") << "hot is full";
  EXPECT_EQ(every.size(), 6u) << "the six cold jobs left";
  EXPECT_EQ(Running("hot"), 2);
}

// A claim of every queue reads no more of a limited queue's backlog than
// it may take (no claim walks a million rows it must skip): it takes the
// queue's share, maybe nothing else, and the next claim, which leaves the
// full queue out, fills from the others.
TEST_P(FlowStoreTest, AClaimOfEveryQueueTakesTheLimitedShareThenTheOthers) {
  Limit("hot", 2);
  AddTo("hot", 500, /*priority=*/5);
  AddTo("cold", 10);
  const WorkerId w = WorkerOn("w", {});
  auto first = ClaimFrom(w, {}, 6);
  int hot = 0;
  for (const JobInfo& j : first) hot += j.queue == "hot" ? 1 : 0;
  EXPECT_EQ(hot, 2);
  EXPECT_LE(first.size(), 6u);
  auto next = ClaimFrom(w, {}, 6);
  EXPECT_EQ(next.size(), 6u) << "at least six cold jobs are left";
  for (const JobInfo& j : next) EXPECT_EQ(j.queue, "cold") << "hot is full";
  EXPECT_EQ(Running("hot"), 2);
}

TEST_P(FlowStoreTest, ClearedLimitsAreGoneAndListed) {
  EXPECT_FALSE(store_->QueueFlowOf("q").value().has_value());
  Limit("q", 1, RateLimit{10, Millis(1000)});
  QueueLimits same;
  same.concurrency = 1;
  same.rate = RateLimit{10, Millis(1000)};
  EXPECT_FALSE(store_->QueueSetLimits("q", same, By("q")).value()) << "unchanged";
  std::vector<QueueInfo> queues = store_->QueueList().value();
  ASSERT_EQ(queues.size(), 1u) << "a limited queue is listed without jobs";
  EXPECT_EQ(queues[0].limits, same);
  AddTo("q", 3);
  const WorkerId w = WorkerOn("w", {"q"});
  EXPECT_EQ(ClaimFrom(w, {"q"}, 3).size(), 1u);
  EXPECT_TRUE(store_->QueueSetLimits("q", QueueLimits{}, By("q")).value());
  EXPECT_FALSE(store_->QueueFlowOf("q").value().has_value());
  EXPECT_TRUE(store_->QueueList().value()[0].limits.empty());
  EXPECT_EQ(ClaimFrom(w, {"q"}, 3).size(), 2u) << "no limit: the rest at once";
  const auto log = store_->AuditList(10, 0).value();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0].action, "queue.limit");
  EXPECT_EQ(log[0].count, 1);
  EXPECT_EQ(log[1].count, 0) << "the unchanged one";
}

// The window is (t - per, t]: claims at t0 leave it exactly per later.
TEST_P(FlowStoreTest, TheRateWindowSlidesToTheMillisecond) {
  Limit("q", std::nullopt, RateLimit{3, Millis(10'000)});
  AddTo("q", 10);
  const WorkerId w = WorkerOn("w", {"q"});
  const TimeMs t0 = clock_.NowMs();
  ASSERT_EQ(ClaimFrom(w, {"q"}, 2).size(), 2u);
  clock_.Advance(Millis(4000));
  ASSERT_EQ(ClaimFrom(w, {"q"}, 5).size(), 1u) << "the third of three";
  EXPECT_TRUE(ClaimFrom(w, {"q"}, 5).empty());
  auto flow = store_->QueueFlowOf("q").value();
  ASSERT_TRUE(flow.has_value());
  EXPECT_EQ(flow->recent_starts, 3);
  EXPECT_EQ(flow->next_start_at, t0 + 10'000) << "when the two first claims leave the window";
  clock_.Advance(Millis(5999));
  EXPECT_TRUE(ClaimFrom(w, {"q"}, 5).empty()) << "1 ms before";
  clock_.Advance(Millis(1));
  EXPECT_EQ(ClaimFrom(w, {"q"}, 5).size(), 2u) << "the two of t0 have left";
  EXPECT_TRUE(ClaimFrom(w, {"q"}, 5).empty());
  EXPECT_EQ(store_->QueueFlowOf("q").value()->next_start_at, t0 + 14'000);
  clock_.Advance(Millis(4000));
  EXPECT_EQ(ClaimFrom(w, {"q"}, 5).size(), 1u);
}

// The guarantee, both ways, over a random run: in every window (t - per,
// t] at most N claims; and a claim that got fewer jobs than it asked for,
// with jobs waiting, found a window that already held N.
TEST_P(FlowStoreTest, TheRateLimitIsExactOverARandomRun) {
  const RateLimit rate{4, Millis(1000)};
  Limit("q", std::nullopt, rate);
  AddTo("q", 150);
  const WorkerId w = WorkerOn("w", {"q"});
  std::mt19937 rng(7);
  std::vector<TimeMs> claims;  // one entry per claimed job
  auto in_window = [&](TimeMs t) {
    int64_t n = 0;
    for (TimeMs c : claims) n += c > t - rate.per.count() && c <= t;
    return n;
  };
  int refused = 0;
  for (int i = 0; i < 120 && claims.size() < 150; ++i) {
    clock_.Advance(Millis(std::uniform_int_distribution<int>(0, 400)(rng)));
    const int want = std::uniform_int_distribution<int>(1, 5)(rng);
    const TimeMs now = clock_.NowMs();
    const int64_t before = in_window(now);
    const size_t got = ClaimFrom(w, {"q"}, want).size();
    EXPECT_EQ(static_cast<int64_t>(got), std::min<int64_t>(want, rate.count - before))
        << "at step " << i << ": " << before << " claims in the window";
    refused += static_cast<int>(got) < want;
    for (size_t k = 0; k < got; ++k) claims.push_back(now);
    EXPECT_LE(in_window(now), rate.count);
  }
  EXPECT_GT(refused, 5) << "the run should have hit the limit";
}

// Many claimers at once, each on its own connection (as separate worker
// processes are): the running jobs of the queue, as the store counts them,
// never exceed the limit. Each claimer counts the jobs it holds, from its
// claim's commit to before its finish is sent: never more than the store
// holds, so a sum above the limit proves the store was above it.
TEST_P(FlowStoreTest, ConcurrentClaimersNeverExceedTheLimit) {
  constexpr int kLimit = 3, kClaimers = 6, kJobs = 90;
  Limit("q", kLimit);
  AddTo("q", kJobs);
  std::atomic<int> held{0}, most{0}, done{0};
  std::atomic<bool> over{false};
  std::vector<std::thread> claimers;
  for (int i = 0; i < kClaimers; ++i) {
    claimers.emplace_back([&, i] {
      std::unique_ptr<Store> store = OpenAnother();
      if (!store) return;
      std::string name(1, 'c');  // (appended: "c" + text is a false -Wrestrict in g++ 12)
      name += std::to_string(i);
      const WorkerId w = WorkerOn(name, {"q"}, store.get());
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (done.load() < kJobs && std::chrono::steady_clock::now() < deadline) {
        auto jobs = ClaimFrom(*store, w, {"q"}, 2);
        const int now_held = held += static_cast<int>(jobs.size());
        int seen = most.load();
        while (now_held > seen && !most.compare_exchange_weak(seen, now_held)) {
        }
        if (now_held > kLimit) over = true;
        if (jobs.empty()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          continue;
        }
        // Held long enough that the others' claims find the queue full.
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        for (const JobInfo& j : jobs) {
          --held;
          Finish(*store, w, j);
          ++done;
        }
      }
    });
  }
  // A sampler of the store's own count meanwhile.
  std::unique_ptr<Store> sampler = OpenAnother();
  int64_t sampled_most = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (sampler && done.load() < kJobs && std::chrono::steady_clock::now() < deadline) {
    auto flow = sampler->QueueFlowOf("q");
    if (!flow.has_value() || !flow->has_value()) {
      ADD_FAILURE() << (flow.has_value() ? "no limit" : flow.error().ToString());
      break;
    }
    sampled_most = std::max(sampled_most, (*flow)->running);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& t : claimers) t.join();
  EXPECT_EQ(done.load(), kJobs);
  EXPECT_FALSE(over.load()) << "claimers held " << most.load() << " at once";
  EXPECT_EQ(std::max<int64_t>(most.load(), sampled_most), kLimit)
      << "the limit was reached, not only respected";
  EXPECT_LE(sampled_most, kLimit);
}

// A limit does not leak into other queues, and a pause still wins.
TEST_P(FlowStoreTest, OtherQueuesAndPausesAreUnchanged) {
  Limit("slow", 1);
  AddTo("slow", 3);
  AddTo("fast", 5);
  const WorkerId w = WorkerOn("w", {"slow", "fast"});
  EXPECT_EQ(ClaimFrom(w, {"fast"}, 10).size(), 5u);
  ASSERT_TRUE(store_->QueueSetPaused("slow", true, By("slow")).value());
  EXPECT_TRUE(ClaimFrom(w, {"slow"}, 10).empty()) << "paused, though it has room";
  ASSERT_TRUE(store_->QueueSetPaused("slow", false, By("slow")).value());
  EXPECT_EQ(ClaimFrom(w, {"slow"}, 10).size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, FlowStoreTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace warden::testing
