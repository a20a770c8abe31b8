// A fixture for tests of an in-process worker (warden::Worker with C++
// handlers) on both backends: a fresh database, a client on it, and
// workers that exit once every job is done.
#pragma once

#include <stdlib.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "pg_test_db.h"
#include "status_matchers.h"
#include "warden/client.h"
#include "warden/worker.h"

namespace inproc {

using warden::testing::IsOk;

enum class Backend { kSqlite, kPostgres };
inline const char* Name(Backend b) { return b == Backend::kSqlite ? "sqlite" : "postgres"; }
inline void PrintTo(Backend b, std::ostream* os) { *os << Name(b); }

class InProcessTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kPostgres) {
      WARDEN_REQUIRE_PG();
      auto db = warden::testing::PgTestDb::Create();
      ASSERT_THAT(db, IsOk());
      pg_ = std::move(*db);
      url_ = pg_->url();
    } else {
      char dir[] = "/tmp/warden-inproc-XXXXXX";
      ASSERT_NE(mkdtemp(dir), nullptr);
      dir_ = dir;
      url_ = dir_ + "/jobs.db";
    }
    auto client = warden::Client::Open(url_);
    ASSERT_THAT(client, IsOk());
    client_ = std::move(*client);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  void Enqueue(int n, const std::string& task) {
    std::vector<warden::JobSpec> specs(static_cast<size_t>(n));
    for (auto& s : specs) s.task = task;
    auto r = client_->EnqueueMany(specs);
    ASSERT_THAT(r, IsOk());
  }

  std::unique_ptr<warden::Worker> MakeWorker(int concurrency,
                                             warden::WorkerOptions o = {}) {
    o.concurrency = concurrency;
    o.exit_when_idle = true;
    auto w = warden::Worker::Create(url_, o);
    EXPECT_THAT(w, IsOk());
    return w.has_value() ? std::move(*w) : nullptr;
  }

  int64_t Count(const std::string& state) {
    auto stats = client_->GetStats();
    EXPECT_THAT(stats, IsOk());
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

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return Name(info.param);
}

}  // namespace inproc
