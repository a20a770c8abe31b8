#include "database_lock.h"

#include <sqlite3.h>

#include <iostream>

#include "poll_until.h"
#include "store/postgres/pg_conn.h"

namespace wt {

DatabaseLock::DatabaseLock(bool postgres, const std::string& db, warden::Millis hold) {
  thread_ = std::thread([this, postgres, db, hold] {
    if (postgres) {
      HoldPostgres(db, hold);
    } else {
      HoldSqlite(db, hold);
    }
    released_ = true;
  });
}

bool DatabaseLock::WaitHeld() {
  return warden::testing::PollUntil([&] { return held_.load() || failed_.load(); },
                                    warden::testing::kDeadline) &&
         held_;
}

void DatabaseLock::HoldSqlite(const std::string& db, warden::Millis hold) {
  sqlite3* conn = nullptr;
  int rc = sqlite3_open_v2(db.c_str(), &conn, SQLITE_OPEN_READWRITE, nullptr);
  if (rc == SQLITE_OK) sqlite3_busy_timeout(conn, 10'000);
  if (rc == SQLITE_OK) rc = sqlite3_exec(conn, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK) {
    held_ = true;
    std::this_thread::sleep_for(hold);  // the scenario: a lock held this long
    sqlite3_exec(conn, "COMMIT", nullptr, nullptr, nullptr);
  } else {
    failed_ = true;
  }
  sqlite3_close(conn);
}

void DatabaseLock::HoldPostgres(const std::string& url, warden::Millis hold) {
  auto conn = warden::pg::Conn::Connect(url);
  warden::Status s = conn.has_value() ? warden::Status::Ok() : conn.error();
  // Another application's session, not warden's: no idle-in-transaction
  // limit (pg::Conn sets warden's 1 s). Our own LOCK waits for the
  // workers' short transactions (up to the session's 5 s lock_timeout).
  if (s.ok()) {
    s = (*conn)->ExecScript(
        "SET idle_in_transaction_session_timeout = 0; BEGIN; LOCK TABLE warden.jobs, "
        "warden.attempts, warden.workers, warden.leaders, warden.fenced_writes IN EXCLUSIVE "
        "MODE");
  }
  if (s.ok()) {
    held_ = true;
    std::this_thread::sleep_for(hold);  // the scenario: a lock held this long
    s = (*conn)->ExecScript("COMMIT");
    if (!s.ok()) std::cerr << "[ lock     ] COMMIT failed: " << s.ToString() << "\n";
  } else {
    std::cerr << "[ lock     ] could not take the lock: " << s.ToString() << "\n";
    failed_ = true;
  }
}

}  // namespace wt
