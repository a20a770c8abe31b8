// An in-process worker's slots, on both backends: a burst of long jobs
// spreads over every slot (the slots are woken a few at a time, each passing
// the word on), and a handler held up saving a checkpoint by a locked
// database still learns of its stop in time.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "database_lock.h"
#include "in_process_fixture.h"
#include "wait_for.h"

namespace {

using namespace std::chrono_literals;
using InProcessWorkerTest = inproc::InProcessTest;
using Clock = std::chrono::steady_clock;
using inproc::IsOk;
using warden::testing::WaitFor;

TEST_P(InProcessWorkerTest, ABurstOfLongJobsRunsOnEverySlotAtOnce) {
  constexpr int kSlots = 16;
  Enqueue(kSlots, "wait-for-all");
  std::mutex mu;
  std::condition_variable cv;
  int running = 0, most = 0;
  auto worker = MakeWorker(kSlots);
  ASSERT_NE(worker, nullptr);
  // Each job waits until every slot has one (at most 10 s): were a woken
  // slot to leave jobs queued without waking another, fewer would ever run
  // at once.
  worker->Handle("wait-for-all", [&](warden::JobContext&) {
    std::unique_lock lock(mu);
    most = std::max(most, ++running);
    cv.notify_all();
    cv.wait_for(lock, 10s, [&] { return most == kSlots; });
    --running;
    return warden::Status::Ok();
  });
  warden::Status s = worker->Run();
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(most, kSlots);
  EXPECT_EQ(Count("succeeded"), kSlots);
}

TEST_P(InProcessWorkerTest, AHandlerSavingACheckpointIntoALockedDatabaseSeesItsStop) {
  // The lock stops heartbeats too, so the worker self-fences the job after
  // 1.25 s (lease 2 s, heartbeat 500 ms). A SaveCheckpoint that made the
  // store call on the handler's thread would return only when the store
  // gave up (its 5 s busy timeout, PostgreSQL's lock_timeout) or the lock
  // went (8 s): the handler would run on past its lease.
  Enqueue(1, "checkpoints");
  warden::WorkerOptions o;
  o.lease = 2s;
  o.heartbeat = 500ms;
  auto worker = MakeWorker(1, o);
  ASSERT_NE(worker, nullptr);
  std::atomic<bool> saving{false};
  std::atomic<int64_t> returned_ns{0};
  std::atomic<int> store_errors{0};
  worker->Handle("checkpoints", [&](warden::JobContext& ctx) {
    if (ctx.attempt() > 1) return warden::Status::Ok();
    for (int step = 0;; ++step) {
      saving = true;
      warden::Status s = ctx.SaveCheckpoint({{"step", step}});
      if (!s.ok()) {
        if (s.code() != warden::StatusCode::kFailedPrecondition) ++store_errors;
        if (ctx.stop_requested()) break;
      }
      std::this_thread::sleep_for(10ms);  // the job's work between checkpoints
    }
    returned_ns = Clock::now().time_since_epoch().count();
    return warden::Status::Ok();
  });
  std::thread run([&] {
    warden::Status s = worker->Run();
    EXPECT_THAT(s, IsOk());
  });
  // A failed ASSERT below must not leave the worker's thread running.
  struct StopAndJoin {
    warden::Worker& w;
    std::thread& t;
    ~StopAndJoin() {
      if (!t.joinable()) return;
      w.Stop(/*release_now=*/true);
      t.join();
    }
  } stop_and_join{*worker, run};
  ASSERT_TRUE(WaitFor([&] { return saving.load(); }));
  std::optional<wt::DatabaseLock> lock;
  lock.emplace(GetParam() == inproc::Backend::kPostgres, url_, 8s);
  ASSERT_TRUE(lock->WaitHeld());
  const int64_t locked_ns = Clock::now().time_since_epoch().count();
  ASSERT_TRUE(WaitFor([&] { return returned_ns.load() != 0; }, 30s));
  const auto after_lock = std::chrono::nanoseconds(returned_ns - locked_ns);
  std::cout << "[ measure  ] the handler returned "
            << std::chrono::duration_cast<std::chrono::milliseconds>(after_lock).count()
            << " ms after the database was locked\n";
  EXPECT_LT(after_lock, 4s);
  EXPECT_FALSE(lock->released());
  EXPECT_EQ(store_errors.load(), 0) << "the store's own error came back before the stop";
  lock.reset();  // waits for the hold to end
  run.join();
  EXPECT_EQ(worker->counters().self_fenced.load(), 1);
  EXPECT_EQ(Count("succeeded"), 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, InProcessWorkerTest,
                         ::testing::Values(inproc::Backend::kSqlite, inproc::Backend::kPostgres),
                         inproc::BackendName);

}  // namespace
