#include "store_fixture.h"

#include <unistd.h>

namespace warden::testing {

std::vector<Backend> AllBackends() {
  return {Backend{"sqlite", false}, Backend{"postgres", true}, Backend{"memory", false, true}};
}

void StoreTest::SetUp() {
  char tmpl[] = "/tmp/warden-store-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  dir_ = tmpl;
  if (GetParam().postgres) {
    WARDEN_REQUIRE_PG();
    auto db = PgTestDb::Create();
    ASSERT_TRUE(db.has_value()) << db.error().ToString();
    pg_db_ = std::move(db).value();
    url_ = pg_db_->url();
    options_.database_clock = &clock_;
  } else if (GetParam().memory) {
    // The temporary directory's name: unique among the tests of every
    // process, as each test's database must be.
    url_ = "memory:" + dir_;
    options_.clock = &clock_;
  } else {
    url_ = "sqlite:" + dir_ + "/test.db";
    options_.clock = &clock_;
  }
  auto s = OpenStore(url_, options_);
  ASSERT_TRUE(s.has_value()) << s.error().ToString();
  store_ = std::move(s).value();
}

void StoreTest::TearDown() {
  store_.reset();
  pg_db_.reset();
  std::filesystem::remove_all(dir_);
}

std::unique_ptr<Store> StoreTest::OpenAnother() {
  auto s = OpenStore(url_, options_);
  EXPECT_TRUE(s.has_value()) << s.error().ToString();
  return s.has_value() ? std::move(s).value() : nullptr;
}

WorkerRegistration TestWorker(const std::string& name) {
  WorkerRegistration r;
  r.name = name;
  r.node = "testhost";
  r.boot_id = "boot";
  r.pid = 1;
  r.version = "test";
  r.queues = {"default"};
  r.tasks = {"t"};
  return r;
}

WorkerId StoreTest::RegisterWorker(const std::string& name) {
  auto id = store_->WorkerRegister(TestWorker(name));
  EXPECT_TRUE(id.has_value()) << id.error().ToString();
  return id.has_value() ? *id : 0;
}

JobSpec StoreTest::Spec(const std::string& task) {
  JobSpec s;
  s.task = task;
  return s;
}

JobId StoreTest::Add(JobSpec spec) {
  auto r = store_->JobInsertMany(std::span<const JobSpec>(&spec, 1));
  EXPECT_TRUE(r.has_value()) << r.error().ToString();
  return r.has_value() ? (*r)[0].id : 0;
}

std::vector<JobInfo> StoreTest::Claim(WorkerId w, int limit, Millis lease, int ahead) {
  ClaimParams p;
  p.worker = w;
  p.queues = {"default"};
  p.tasks = {"t"};
  p.limit = limit;
  p.ahead = ahead;
  p.default_lease = lease;
  auto r = store_->JobClaim(p);
  EXPECT_TRUE(r.has_value()) << r.error().ToString();
  return r.has_value() ? *r : std::vector<JobInfo>{};
}

}  // namespace warden::testing
