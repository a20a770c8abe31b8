// A thin RAII layer over libsqlite3: a connection that caches prepared
// statements, a statement with typed binds and reads, and a transaction
// guard. Every SQL error becomes a Status whose code says how to react
// (busy/locked/full/read-only -> kUnavailable, corrupt -> kDataLoss).
//
// Thread safety: none; SqliteStore serialises access with its own mutex.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/mutex.h"
#include "env/system_clock.h"
#include "warden/status.h"

namespace warden::sqlite {

// State of the busy handler (see sqlite_db.cc).
struct BusyWaitState {
  int timeout_ms = 0;
  std::chrono::steady_clock::time_point first;
};

Status StatusFromCode(int rc, sqlite3* db, const std::string& context);

// A lock with a timed acquire (for std::unique_lock), built from a mutex and
// a condition variable: std::timed_mutex's try_lock_for calls
// pthread_mutex_clocklock, which GCC 12's ThreadSanitizer does not see, so
// it reported every unlock as one of an unlocked mutex.
class WriterLock {
 public:
  bool try_lock_for(std::chrono::milliseconds timeout) EXCLUDES(mu_);
  void unlock() EXCLUDES(mu_);

 private:
  Mutex mu_;
  CondVar freed_{SystemClock::Get()};  // the busy timeout is real time
  bool held_ GUARDED_BY(mu_) = false;
};

class Stmt {
 public:
  Stmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  // Binds by 1-based position.
  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Stmt& Bind(int i, const std::string& v);
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string(v)); }
  Stmt& Bind(int i, std::optional<int64_t> v);
  Stmt& BindNull(int i);
  Stmt& BindDouble(int i, double v);
  // Empty string binds NULL (used for optional keys).
  Stmt& BindTextOrNull(int i, const std::string& v);

  // Steps once. true: a row is ready; false: done.
  Result<bool> Step();
  // Steps to completion; returns sqlite3_changes().
  Result<int> Exec();

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  std::optional<int64_t> OptInt(int col) const;
  std::string Text(int col) const;
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  bool Bool(int col) const { return Int(col) != 0; }  // stored as 0 or 1

  void Reset();

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

class Db {
 public:
  static Result<std::unique_ptr<Db>> Open(const std::string& path, int busy_timeout_ms);
  // Wraps a connection someone else owns (and will close).
  static std::unique_ptr<Db> Borrow(sqlite3* db);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs statements with no parameters (DDL, PRAGMA).
  Status ExecScript(const std::string& sql);
  // A cached prepared statement, reset and with bindings cleared.
  Result<Stmt> Prepare(const std::string& sql);

  sqlite3* raw() { return db_; }

  // Durable commits without the fsync under the write lock. The connection
  // runs synchronous=NORMAL (no sync at commit) and every commit then syncs
  // the write-ahead log itself, once the write lock is released (SQLite's
  // and this process's, see WriteTx): other writers go on meanwhile, and
  // commits that end together share one fsync. A call returns only after
  // its commit is on disk, as with synchronous=FULL. Commits made while an
  // UnsyncedCommits lives are not synced.
  Status SyncCommitsAfterUnlock();

 private:
  friend class WriteTx;
  friend class UnsyncedCommits;
  // Runs after each commit (sqlite3_wal_hook), the write lock released.
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int frames);
  // The WAL's frames so far made durable: an SQLite result code.
  int SyncWal();
  bool sync_commits_ = false;
  bool in_write_tx_ = false;  // WriteTx syncs at its end, not the hook
  int unsynced_ = 0;          // UnsyncedCommits alive
  explicit Db(sqlite3* db, bool owned = true) : db_(db), owned_(owned) {}
  sqlite3* db_;
  bool owned_;
  std::unique_ptr<BusyWaitState> busy_;
  // Shared by this process's connections to the same file (see WriteTx).
  std::shared_ptr<WriterLock> writers_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
};

// BEGIN IMMEDIATE on construction (so the write lock is taken up front and a
// busy database is reported before any work), ROLLBACK unless committed.
//
// Write transactions of one process on one file first queue on a mutex the
// connections share. Waiting in SQLite's busy handler instead means sleeping
// in steps, so the lock sat idle after each commit while the next writer
// slept: a worker's claims and completions lost about a quarter of their
// speed to it. Other processes still meet at SQLite's own lock.
class WriteTx {
 public:
  static Result<std::unique_ptr<WriteTx>> Begin(Db& db);
  ~WriteTx();
  // `on_visible` runs once other connections can see the changes, before
  // the sync that makes them durable (see Db::SyncCommitsAfterUnlock).
  Status Commit(const std::function<void()>& on_visible = nullptr);

 private:
  WriteTx(Db& db, std::unique_lock<WriterLock> writer)
      : db_(db), writer_(std::move(writer)) {}
  Db& db_;
  std::unique_lock<WriterLock> writer_;
  bool done_ = false;
};

// Commits made while it lives are not synced (see SyncCommitsAfterUnlock):
// a later synced commit of the same file makes them durable with it, as the
// WAL is written in order.
class UnsyncedCommits {
 public:
  explicit UnsyncedCommits(Db& db) : db_(db) { ++db_.unsynced_; }
  ~UnsyncedCommits() { --db_.unsynced_; }
  UnsyncedCommits(const UnsyncedCommits&) = delete;
  UnsyncedCommits& operator=(const UnsyncedCommits&) = delete;

 private:
  Db& db_;
};

}  // namespace warden::sqlite
