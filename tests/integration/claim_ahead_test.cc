// Claiming ahead (core/claim_ahead.h) in a real in-process worker, on both
// backends: short jobs are claimed beyond the free slots and each still
// runs exactly once; long jobs are never claimed ahead.
#include <stdlib.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "pg_test_db.h"
#include "warden/client.h"
#include "warden/worker.h"

namespace {

using namespace std::chrono_literals;

enum class Backend { kSqlite, kPostgres };
const char* Name(Backend b) { return b == Backend::kSqlite ? "sqlite" : "postgres"; }
void PrintTo(Backend b, std::ostream* os) { *os << Name(b); }

class ClaimAheadTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kPostgres) {
      WARDEN_REQUIRE_PG();
      auto db = warden::testing::PgTestDb::Create();
      ASSERT_TRUE(db.has_value()) << db.error().ToString();
      pg_ = std::move(*db);
      url_ = pg_->url();
    } else {
      char dir[] = "/tmp/warden-claim-ahead-XXXXXX";
      ASSERT_NE(mkdtemp(dir), nullptr);
      dir_ = dir;
      url_ = dir_ + "/jobs.db";
    }
    auto client = warden::Client::Open(url_);
    ASSERT_TRUE(client.has_value()) << client.error().ToString();
    client_ = std::move(*client);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  void Enqueue(int n, const std::string& task) {
    std::vector<warden::JobSpec> specs(static_cast<size_t>(n));
    for (auto& s : specs) s.task = task;
    auto r = client_->EnqueueMany(specs);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
  }

  std::unique_ptr<warden::Worker> MakeWorker(int concurrency) {
    warden::WorkerOptions o;
    o.concurrency = concurrency;
    o.exit_when_idle = true;
    auto w = warden::Worker::Create(url_, o);
    EXPECT_TRUE(w.has_value()) << w.error().ToString();
    return w.has_value() ? std::move(*w) : nullptr;
  }

  int64_t Count(const std::string& state) {
    auto stats = client_->GetStats();
    EXPECT_TRUE(stats.has_value()) << stats.error().ToString();
    if (!stats.has_value()) return -1;
    for (const auto& [s, n] : stats->jobs) {
      if (s == state) return n;
    }
    return 0;
  }

  std::string url_, dir_;
  std::unique_ptr<warden::testing::PgTestDb> pg_;
  std::unique_ptr<warden::Client> client_;
};

TEST_P(ClaimAheadTest, ShortJobsAreClaimedAheadAndEachRunsOnce) {
  constexpr int kJobs = 3000;
  Enqueue(kJobs, "noop");
  std::mutex mu;
  std::map<warden::JobId, int> runs;
  auto worker = MakeWorker(2);
  ASSERT_NE(worker, nullptr);
  worker->Handle("noop", [&](warden::JobContext& ctx) {
    std::lock_guard lock(mu);
    ++runs[ctx.id()];
    return warden::Status::Ok();
  });
  warden::Status s = worker->Run();
  ASSERT_TRUE(s.ok()) << s.ToString();

  // Each claim round trip (a durable commit) outlasts a no-op job many
  // times over, so the worker claims beyond its two slots.
  EXPECT_GT(worker->counters().claimed_ahead.load(), 0);
  EXPECT_EQ(runs.size(), static_cast<size_t>(kJobs));
  for (const auto& [id, n] : runs) ASSERT_EQ(n, 1) << "job " << id;
  EXPECT_EQ(Count("succeeded"), kJobs);
  EXPECT_EQ(worker->counters().fenced.load(), 0);
}

TEST_P(ClaimAheadTest, LongJobsAreNeverClaimedAhead) {
  // 2 slots × a claim's time is far below 500 ms, even on a loaded machine
  // under a sanitizer.
  Enqueue(6, "slow");
  auto worker = MakeWorker(2);
  ASSERT_NE(worker, nullptr);
  worker->Handle("slow", [](warden::JobContext&) {
    std::this_thread::sleep_for(500ms);
    return warden::Status::Ok();
  });
  warden::Status s = worker->Run();
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Every claim asked for the free slots only. (The store may show more
  // than two running for a moment: an outcome is written after its slot
  // has freed.)
  EXPECT_EQ(worker->counters().claimed_ahead.load(), 0);
  EXPECT_EQ(Count("succeeded"), 6);
}

INSTANTIATE_TEST_SUITE_P(Backends, ClaimAheadTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const auto& info) { return std::string(Name(info.param)); });

}  // namespace
