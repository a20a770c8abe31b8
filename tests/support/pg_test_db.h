// Throwaway PostgreSQL databases for tests.
//
// `make test` starts a private server (scripts/pg-cluster.sh) and exports
// WARDEN_TEST_PG_URL; each test creates its own database there, so tests
// run in parallel without seeing each other's jobs. Without the variable,
// PostgreSQL tests fail under CI=true (CI must test both backends) and are
// skipped with a message elsewhere.
//
//   void SetUp() override {
//     WARDEN_REQUIRE_PG();
//     auto db = PgTestDb::Create();
//     ASSERT_TRUE(db.has_value()) << db.error().ToString();
//   }
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "child_process.h"
#include "warden/status.h"

namespace warden::testing {

// The server URL from WARDEN_TEST_PG_URL, if set.
std::optional<std::string> PgTestUrl();
// Set where the test may restart the server or cut its connections
// (scripts/pg-cluster.sh's directory and the script itself).
std::optional<std::string> PgTestCluster();
bool InCi();
// "$WARDEN_PG_CLUSTER_SCRIPT ACTION $WARDEN_TEST_PG_CLUSTER": restart,
// kill-backends. Returns the exit status (-1: no cluster to act on).
int PgClusterAction(const std::string& action);
// scripts/pg-cluster.sh: as `pg-cluster.sh run` exports it
// (WARDEN_PG_CLUSTER_SCRIPT), else this source tree's; for tests that start
// a private cluster of their own (one they may stop, restart or step the
// clock of without disturbing the tests that share the server above).
std::string PgClusterScript();
// `pg-cluster.sh ACTION CLUSTER_DIR` (start prints the cluster's URL as the
// first line of stdout; stop, restart, kill-backends), with its output
// through `base`.out and `base`.err. `prefix` is a command that execs the
// rest (`env LD_PRELOAD=...`, `ip netns exec NS`). Every action takes well
// under the 2 minutes it is given (start waits at most 30 s for the server).
CmdResult RunPgCluster(const std::string& action, const std::string& cluster_dir,
                       const std::string& base, const std::vector<std::string>& prefix = {});

class PgTestDb {
 public:
  // CREATE DATABASE with a unique name on the test server.
  static Result<std::unique_ptr<PgTestDb>> Create();
  ~PgTestDb();  // DROP DATABASE ... WITH (FORCE)
  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }

 private:
  PgTestDb(std::string admin_url, std::string name, std::string url)
      : admin_url_(std::move(admin_url)), name_(std::move(name)), url_(std::move(url)) {}
  std::string admin_url_, name_, url_;
};

}  // namespace warden::testing

// Fails (CI) or skips (elsewhere) the current test when no PostgreSQL
// server was provided.
#define WARDEN_REQUIRE_PG()                                                           \
  do {                                                                                \
    if (!::warden::testing::PgTestUrl()) {                                            \
      if (::warden::testing::InCi()) {                                                \
        FAIL() << "CI=true but WARDEN_TEST_PG_URL is not set: run the tests through " \
                  "`make test` (scripts/pg-cluster.sh starts PostgreSQL)";            \
      }                                                                               \
      GTEST_SKIP() << "no PostgreSQL: set WARDEN_TEST_PG_URL or run `make test`";     \
    }                                                                                 \
  } while (0)
