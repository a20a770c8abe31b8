// Flow control on PostgreSQL, where claims run concurrently under READ
// COMMITTED: a claim of a limited queue locks the queue's limit row, so
// claims of it take turns (each counts what the one before committed);
// a claim of queues without limits takes no such lock: it never waits for
// a limited queue's claims (the one-statement claim only probes the empty
// queue_limits table for the queues it picked).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "pg_test_db.h"
#include "store/postgres/pg_conn.h"
#include "store/store.h"

namespace warden::testing {
namespace {

class FlowPostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WARDEN_REQUIRE_PG();
    auto db = PgTestDb::Create();
    ASSERT_TRUE(db.has_value()) << db.error().ToString();
    db_ = std::move(db).value();
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }
  std::unique_ptr<Store> Open() {
    auto s = OpenStore(db_->url());
    EXPECT_TRUE(s.has_value()) << s.error().ToString();
    return s.has_value() ? std::move(s).value() : nullptr;
  }
  WorkerId Register(Store& s, const std::string& name, std::vector<std::string> queues) {
    WorkerRegistration r;
    r.name = name;
    r.node = "host-" + name;
    r.boot_id = "boot";
    r.pid = 1;
    r.version = "test";
    r.queues = std::move(queues);
    r.tasks = {"t"};
    auto id = s.WorkerRegister(r);
    EXPECT_TRUE(id.has_value()) << id.error().ToString();
    return id.has_value() ? *id : 0;
  }
  void AddTo(const std::string& queue, int n) {
    std::vector<JobSpec> specs(n);
    for (JobSpec& s : specs) {
      s.task.push_back('t');
      s.queue = queue;
    }
    ASSERT_TRUE(store_->JobInsertMany(specs).has_value());
  }
  static Result<std::vector<JobInfo>> ClaimFrom(Store& s, WorkerId w, const std::string& queue) {
    ClaimParams p;
    p.worker = w;
    p.queues = {queue};
    p.tasks = {"t"};
    p.limit = 2;
    return s.JobClaim(p);
  }
  std::unique_ptr<PgTestDb> db_;
  std::unique_ptr<Store> store_;
};

TEST_F(FlowPostgresTest, ALimitedQueuesClaimsTakeTurnsAndOtherQueuesNeverWait) {
  QueueLimits l;
  l.concurrency = 5;
  ASSERT_TRUE(store_->QueueSetLimits("lim", l, AuditEntry{0, 0, "test", "queue.limit", "lim", 0})
                  .has_value());
  AddTo("lim", 4);
  AddTo("free", 4);
  const WorkerId free_worker = Register(*store_, "f", {"free"});
  std::unique_ptr<Store> other = Open();
  ASSERT_NE(other, nullptr);
  const WorkerId lim_worker = Register(*other, "l", {"lim"});

  // Another session holds the limit row, as a claim of `lim` in progress.
  auto holder = pg::Conn::Connect(db_->url());
  ASSERT_TRUE(holder.has_value()) << holder.error().ToString();
  ASSERT_TRUE((*holder)->ExecScript("BEGIN").ok());
  ASSERT_TRUE((*holder)
                  ->Exec("SELECT 1 FROM warden.queue_limits WHERE queue = 'lim' FOR UPDATE")
                  .has_value());

  const auto start = std::chrono::steady_clock::now();
  auto freed = ClaimFrom(*store_, free_worker, "free");
  ASSERT_TRUE(freed.has_value()) << freed.error().ToString();
  EXPECT_EQ(freed->size(), 2u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000))
      << "a claim of a queue without limits waited for the limit row";

  std::atomic<bool> done{false};
  size_t got = 0;
  std::thread limited([&] {
    auto r = ClaimFrom(*other, lim_worker, "lim");
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    if (r.has_value()) got = r->size();
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_FALSE(done.load()) << "the limited claim did not wait for the row's lock";
  EXPECT_TRUE((*holder)->ExecScript("COMMIT").ok());
  limited.join();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(got, 2u);
}

}  // namespace
}  // namespace warden::testing
