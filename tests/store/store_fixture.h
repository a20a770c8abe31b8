// The store conformance suite runs every test against every backend. A
// backend is a factory that opens a fresh, empty store on a FakeClock.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "core/clock.h"
#include "store/store.h"

namespace warden::testing {

struct Backend {
  std::string name;
  // Opens a store on a fresh database; `dir` is a scratch directory.
  std::function<Result<std::unique_ptr<Store>>(const std::string& dir, const Clock* clock)> open;
};

std::vector<Backend> AllBackends();

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A second connection to the same database (another process's view).
  std::unique_ptr<Store> OpenAnother();
  WorkerId RegisterWorker(const std::string& name = "w");
  JobId Add(JobSpec spec);
  JobSpec Spec(const std::string& task = "t");
  std::vector<JobInfo> Claim(WorkerId w, int limit = 10, Millis lease = Millis(10'000));

  FakeClock clock_;
  std::string dir_;
  std::unique_ptr<Store> store_;
};

}  // namespace warden::testing

namespace warden::testing {
inline void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }
}  // namespace warden::testing
