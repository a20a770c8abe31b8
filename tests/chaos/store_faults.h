// Faults of the store itself, and the PostgreSQL plumbing around them:
// another process holding the SQLite write lock, a server restart, every
// session of our database terminated; and a fresh database (or a private
// cluster) for the run.
//
// Thread safety: none; the runner's main thread drives them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sandbox.h"

namespace chaos {

// A helper process the runner does not wait for: a lock holder or a
// `pg-cluster.sh restart`. Done() once it exited.
class AsyncCommand {
 public:
  AsyncCommand(const std::vector<std::string>& argv, const std::string& dir,
               const std::string& name);
  bool Done();
  int exit_code() const { return exit_code_; }
  int64_t started_ms() const { return started_ms_; }
  int64_t ended_ms() const { return ended_ms_; }
  std::string Output() const { return child_->Stdout() + child_->Stderr(); }
  // A "WORD MS" line of its stdout (the lock holder's "locked" and
  // "released"); -1 if not (yet) printed.
  int64_t Stamp(const std::string& word) const;
  void Kill() { child_->Kill(); }

 private:
  std::unique_ptr<warden::testing::Child> child_;
  int64_t started_ms_ = 0, ended_ms_ = -1;
  int exit_code_ = -1;
};

// postgresql://user@host:port/db?opts -> the same URL naming database `db`.
std::string WithDatabase(const std::string& url, const std::string& db);
// The database a URL names ("" if none).
std::string DatabaseOf(const std::string& url);

// CREATE DATABASE `name` on the server `admin_url` names; "" or the error.
std::string CreateDatabase(const std::string& admin_url,
                           const std::string& name);
void DropDatabase(const std::string& admin_url, const std::string& name);
// Terminates every session of database `db` but our own. Returns how many,
// or an error message.
std::string TerminateBackends(const std::string& admin_url,
                              const std::string& db, int* count);

}  // namespace chaos
