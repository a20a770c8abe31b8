// Another process's lock against every writer, held for a while on a thread
// of the test with its own connection (locks are between connections, so
// workers see what another process would cause). Readers go on; every
// write waits, and gives up after the backend's wait limit (5 s on both).
//  - SQLite: a write transaction (BEGIN IMMEDIATE) holds the database's one
//    write lock; writers wait up to the store's busy timeout.
//  - PostgreSQL has no database-wide write lock; the nearest thing another
//    session can hold is an EXCLUSIVE lock on every warden table (what a
//    migration or an operator's maintenance takes); writers wait up to the
//    session's lock_timeout, then fail with lock_not_available.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "warden/job.h"

namespace wt {

class DatabaseLock {
 public:
  // `db`: the SQLite file, or the PostgreSQL URL when `postgres`.
  DatabaseLock(bool postgres, const std::string& db, warden::Millis hold);
  ~DatabaseLock() { Join(); }
  // Whether the lock was taken (waits until it is, or failed).
  bool WaitHeld();
  // Whether the hold is over (the lock released, or never taken).
  bool released() const { return released_; }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  void HoldSqlite(const std::string& db, warden::Millis hold);
  void HoldPostgres(const std::string& url, warden::Millis hold);

  std::atomic<bool> held_{false}, failed_{false}, released_{false};
  std::thread thread_;
};

}  // namespace wt
