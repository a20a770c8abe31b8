#include "pg_test_db.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "store/postgres/pg_conn.h"

namespace warden::testing {
namespace {

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// postgresql://user@host:port/db?opts -> the same URL naming `dbname`.
std::string WithDatabase(const std::string& url, const std::string& dbname) {
  const size_t scheme = url.find("://");
  const size_t path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  const size_t query = url.find('?', path == std::string::npos ? 0 : path);
  std::string base = path == std::string::npos ? url.substr(0, query) : url.substr(0, path);
  std::string rest = query == std::string::npos ? "" : url.substr(query);
  return base + "/" + dbname + rest;
}

}  // namespace

std::optional<std::string> PgTestUrl() { return Env("WARDEN_TEST_PG_URL"); }
std::optional<std::string> PgTestCluster() { return Env("WARDEN_TEST_PG_CLUSTER"); }

bool InCi() {
  auto ci = Env("CI");
  return ci && *ci != "false" && *ci != "0";
}

int PgClusterAction(const std::string& action) {
  auto cluster = PgTestCluster();
  auto script = Env("WARDEN_PG_CLUSTER_SCRIPT");
  if (!cluster || !script) return -1;
  const std::string cmd = "'" + *script + "' " + action + " '" + *cluster + "' >/dev/null";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string PgClusterScript() {
  return Env("WARDEN_PG_CLUSTER_SCRIPT").value_or(WARDEN_SOURCE_DIR "/scripts/pg-cluster.sh");
}

CmdResult RunPgCluster(const std::string& action, const std::string& cluster_dir,
                       const std::string& base, const std::vector<std::string>& prefix) {
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {PgClusterScript(), action, cluster_dir});
  return RunToExit(argv, base, Millis(120'000));
}

Result<std::unique_ptr<PgTestDb>> PgTestDb::Create() {
  auto admin = PgTestUrl();
  if (!admin) return FailedPrecondition("WARDEN_TEST_PG_URL is not set");
  static std::atomic<int> counter{0};
  const std::string name = "wt_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  WARDEN_ASSIGN_OR_RETURN(auto conn, pg::Conn::Connect(*admin));
  // Names are ours (digits and underscores): no quoting needed.
  WARDEN_RETURN_IF_ERROR(conn->ExecScript("CREATE DATABASE " + name));
  return std::unique_ptr<PgTestDb>(new PgTestDb(*admin, name, WithDatabase(*admin, name)));
}

PgTestDb::~PgTestDb() {
  auto conn = pg::Conn::Connect(admin_url_);
  if (conn.has_value()) {
    (void)(*conn)->ExecScript("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  }
}

}  // namespace warden::testing
