// Claiming ahead (core/claim_ahead.h) in a real in-process worker, on both
// backends: short jobs are claimed beyond the free slots and each still
// runs exactly once; long jobs are never claimed ahead.
#include <map>
#include <mutex>
#include <thread>

#include "in_process_fixture.h"

namespace {

using namespace std::chrono_literals;
using ClaimAheadTest = inproc::InProcessTest;
using inproc::IsOk;

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
  ASSERT_THAT(s, IsOk());

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
    std::this_thread::sleep_for(500ms);  // the job's work: long
    return warden::Status::Ok();
  });
  warden::Status s = worker->Run();
  ASSERT_THAT(s, IsOk());
  // Every claim asked for the free slots only. (The store may show more
  // than two running for a moment: an outcome is written after its slot
  // has freed.)
  EXPECT_EQ(worker->counters().claimed_ahead.load(), 0);
  EXPECT_EQ(Count("succeeded"), 6);
}

INSTANTIATE_TEST_SUITE_P(Backends, ClaimAheadTest,
                         ::testing::Values(inproc::Backend::kSqlite, inproc::Backend::kPostgres),
                         inproc::BackendName);

}  // namespace
