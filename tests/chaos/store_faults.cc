#include "store_faults.h"

#include <sstream>

#include "ledger.h"
#include "store/postgres/pg_conn.h"

namespace chaos {

using warden::testing::Child;

AsyncCommand::AsyncCommand(const std::vector<std::string>& argv,
                           const std::string& dir, const std::string& name) {
  started_ms_ = WallMs();
  child_ = Child::Spawn(argv, dir + "/" + name + ".out",
                        dir + "/" + name + ".err", {.die_with_parent = true});
}

bool AsyncCommand::Done() {
  if (ended_ms_ >= 0) return true;
  if (!child_->Exited()) return false;
  ended_ms_ = WallMs();
  exit_code_ = child_->ExitCode();
  return true;
}

int64_t AsyncCommand::Stamp(const std::string& word) const {
  std::istringstream out(child_->Stdout());
  std::string w;
  int64_t ms = 0;
  while (out >> w >> ms) {
    if (w == word) return ms;
  }
  return -1;
}

std::string WithDatabase(const std::string& url, const std::string& db) {
  const size_t scheme = url.find("://");
  const size_t path =
      url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  const size_t query = url.find('?', path == std::string::npos ? 0 : path);
  const std::string base =
      path == std::string::npos ? url.substr(0, query) : url.substr(0, path);
  const std::string rest = query == std::string::npos ? "" : url.substr(query);
  return base + "/" + db + rest;
}

std::string DatabaseOf(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t path =
      url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (path == std::string::npos) return "";
  const std::string rest = url.substr(path + 1);
  return rest.substr(0, rest.find('?'));
}

std::string CreateDatabase(const std::string& admin_url,
                           const std::string& name) {
  auto conn = warden::pg::Conn::Connect(admin_url);
  if (!conn.has_value()) return conn.error().ToString();
  // Our own name (letters, digits, underscores): no quoting needed.
  warden::Status s = (*conn)->ExecScript("CREATE DATABASE " + name);
  return s.ok() ? "" : s.ToString();
}

void DropDatabase(const std::string& admin_url, const std::string& name) {
  auto conn = warden::pg::Conn::Connect(admin_url);
  if (conn.has_value()) {
    (void)(*conn)->ExecScript("DROP DATABASE IF EXISTS " + name +
                              " WITH (FORCE)");
  }
}

std::string TerminateBackends(const std::string& admin_url,
                              const std::string& db, int* count) {
  auto conn = warden::pg::Conn::Connect(admin_url);
  if (!conn.has_value()) return conn.error().ToString();
  auto rows = (*conn)->Exec(
      "SELECT count(*) FILTER (WHERE t) FROM (SELECT pg_terminate_backend(pid) "
      "AS t "
      "FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()) x",
      warden::pg::Params().Add(db));
  if (!rows.has_value()) return rows.error().ToString();
  *count = static_cast<int>(rows->Int(0, 0));
  return "";
}

}  // namespace chaos
