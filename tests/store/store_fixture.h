// The store conformance suite runs every test against every backend, each
// on a fresh, empty database whose clock is a FakeClock (SQLite and memory:
// the store's clock; PostgreSQL: StoreOptions::database_clock, standing in
// for the server's clock). A memory database is named after the test's
// temporary directory, so each starts empty.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "core/clock.h"
#include "pg_test_db.h"
#include "store/store.h"

namespace warden::testing {

struct Backend {
  std::string name;
  bool postgres = false;
  bool memory = false;  // memory:NAME, this process only
};

std::vector<Backend> AllBackends();

// A worker of this host on queue `default`, serving task `t`.
WorkerRegistration TestWorker(const std::string& name = "w");

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A second connection to the same database (another process's view).
  std::unique_ptr<Store> OpenAnother();
  WorkerId RegisterWorker(const std::string& name = "w");
  JobId Add(JobSpec spec);
  JobSpec Spec(const std::string& task = "t");
  // `ahead`: ClaimParams::ahead, the last of `limit` only if safe to claim ahead.
  std::vector<JobInfo> Claim(WorkerId w, int limit = 10, Millis lease = Millis(10'000),
                             int ahead = 0);

  FakeClock clock_;
  std::string dir_;
  std::string url_;
  StoreOptions options_;
  std::unique_ptr<PgTestDb> pg_db_;
  std::unique_ptr<Store> store_;
};

}  // namespace warden::testing

namespace warden::testing {
inline void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }
}  // namespace warden::testing
