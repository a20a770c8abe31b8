#include "store/sqlite/sqlite_db.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

namespace warden::sqlite {

// SQLite's default busy handler sleeps 1, 2, 5, 10 ... 100 ms between
// tries: with several workers sharing one file, a commit that takes 1 ms
// then costs its waiters tens of ms. Retry in steps of 50 us to 1 ms
// instead, until the timeout.
namespace {

int RetryWhileBusy(void* arg, int count) {
  auto* w = static_cast<BusyWaitState*>(arg);
  const auto now = std::chrono::steady_clock::now();
  if (count == 0) w->first = now;
  if (now - w->first >= std::chrono::milliseconds(w->timeout_ms)) return 0;
  const long us = std::min(50L * (count + 1), 1000L);
  timespec ts{0, us * 1000};
  nanosleep(&ts, nullptr);
  return 1;
}

// One lock per database file among this process's connections.
std::shared_ptr<WriterLock> WritersOf(sqlite3* db) {
  const char* name = sqlite3_db_filename(db, "main");
  if (name == nullptr || *name == '\0') return std::make_shared<WriterLock>();
  static Mutex registry_mu;
  static std::unordered_map<std::string, std::weak_ptr<WriterLock>> registry
      GUARDED_BY(registry_mu);
  MutexLock lock(registry_mu);
  std::weak_ptr<WriterLock>& slot = registry[name];
  std::shared_ptr<WriterLock> m = slot.lock();
  if (!m) {
    m = std::make_shared<WriterLock>();
    slot = m;
  }
  return m;
}

}  // namespace

bool WriterLock::try_lock_for(std::chrono::milliseconds timeout) {
  UniqueMutexLock lock(mu_);
  if (!freed_.WaitFor(lock, Millis(timeout.count()), [&]() REQUIRES(mu_) { return !held_; })) {
    return false;
  }
  held_ = true;
  return true;
}

void WriterLock::unlock() {
  {
    MutexLock lock(mu_);
    held_ = false;
  }
  freed_.NotifyOne();
}

Status StatusFromCode(int rc, sqlite3* db, const std::string& context) {
  const int primary = rc & 0xff;
  std::string msg = context + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  // Writes fail long after the open that named the file: name it again.
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  // (std::string's operator+ here trips a false -Wstringop-overflow in g++ 12.)
  std::string named = "the database";
  if (file && *file) named = fmt::format("'{}'", file);
  switch (primary) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
      return Status::Ok();
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_PROTOCOL:
      return Unavailable(msg + " (another process holds the database lock)");
    case SQLITE_FULL:
      return Unavailable(msg + " (the disk holding " + named + " is full)");
    case SQLITE_READONLY:
      return Unavailable(msg + " (" + named + " or its file system is read-only)");
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_PERM:
      return Unavailable(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return DataLoss(msg + " (the database file is damaged or not a warden database)");
    case SQLITE_CONSTRAINT:
      return FailedPrecondition(msg);
    default:
      return Internal(msg);
  }
}

Stmt& Stmt::Bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}

Stmt& Stmt::Bind(int i, const std::string& v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::Bind(int i, std::optional<int64_t> v) {
  return v ? Bind(i, *v) : BindNull(i);
}

Stmt& Stmt::BindDouble(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}

Stmt& Stmt::BindNull(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Stmt& Stmt::BindTextOrNull(int i, const std::string& v) {
  return v.empty() ? BindNull(i) : Bind(i, v);
}

Result<bool> Stmt::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status s = StatusFromCode(rc, db_, "sqlite");
  sqlite3_reset(stmt_);
  return s;
}

Result<int> Stmt::Exec() {
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) break;
  }
  return sqlite3_changes(db_);
}

std::optional<int64_t> Stmt::OptInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Int(col);
}

std::string Stmt::Text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (!p) return {};
  return std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

// SQLite counts every allocation in process-wide statistics under one
// global mutex: it cost 8-13% of a worker's jobs/s (bench/ab_throughput.sh,
// builds before and after this, 512 and 8 slots). SQLite's own list of
// recommended options turns it off (SQLITE_DEFAULT_MEMSTATUS=0); Debian's
// build leaves it on. sqlite3_config can only change it before SQLite is
// initialized, and refuses (SQLITE_MISUSE, nothing changed) afterwards: so
// a process that used SQLite before warden's first open keeps its
// statistics, and one that needs them (sqlite3_memory_used, heap limits)
// calls sqlite3_initialize() first (docs/guarantees.md, "Durability and
// limits").
namespace {
void TurnOffMemoryStatisticsIfUninitialized() {
  static std::once_flag once;
  std::call_once(once, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}
}  // namespace

// A new database file is created private to its owner (0600): it holds
// payloads, results and stderr tails. SQLite creates the -wal and -shm
// files with the mode of the database file, so they follow. An existing
// file keeps the mode it has (an operator may have shared it with a group).
// O_EXCL: a file another process creates meanwhile is left as it is.
namespace {
void CreatePrivateIfMissing(const std::string& path) {
  if (path.empty() || path == ":memory:") return;
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
}
}  // namespace

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, int busy_timeout_ms) {
  TurnOffMemoryStatisticsIfUninitialized();
  CreatePrivateIfMissing(path);
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status s = StatusFromCode(rc, raw, "cannot open database '" + path + "'");
    sqlite3_close(raw);
    return s;
  }
  sqlite3_extended_result_codes(raw, 1);
  std::unique_ptr<Db> db(new Db(raw));
  db->busy_ = std::make_unique<BusyWaitState>();
  db->busy_->timeout_ms = busy_timeout_ms;
  sqlite3_busy_handler(raw, RetryWhileBusy, db->busy_.get());
  db->writers_ = WritersOf(raw);
  return db;
}

std::unique_ptr<Db> Db::Borrow(sqlite3* db) { return std::unique_ptr<Db>(new Db(db, false)); }

Db::~Db() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  if (owned_) sqlite3_close(db_);
}

Status Db::ExecScript(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (err) sqlite3_free(err);
  return StatusFromCode(rc, db_, "sqlite");
}

Result<Stmt> Db::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return StatusFromCode(rc, db_, "prepare");
    it = cache_.emplace(sql, stmt).first;
  }
  Stmt s(db_, it->second);
  s.Reset();
  return s;
}

Result<std::unique_ptr<WriteTx>> WriteTx::Begin(Db& db) {
  // SQLite goes on writing to a file deleted (or unmounted) under it: what
  // it accepted then would vanish with the last handle, and a new file at
  // the path would never see it. One stat() per write transaction.
  int moved = 0;
  if (sqlite3_file_control(db.raw(), "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK &&
      moved) {
    const char* name = sqlite3_db_filename(db.raw(), "main");
    return Unavailable("the database file '" + std::string(name ? name : "") +
                       "' was deleted, moved or replaced after this process opened it; "
                       "nothing more is written to it");
  }
  std::unique_lock<WriterLock> writer;
  if (db.writers_) {
    // Bounded like SQLite's own wait: a writer of this process stuck in a
    // long transaction is reported as a busy database, not waited on forever.
    writer = std::unique_lock(*db.writers_, std::defer_lock);
    const int timeout_ms = db.busy_ ? db.busy_->timeout_ms : 0;
    if (!writer.try_lock_for(std::chrono::milliseconds(timeout_ms))) {
      return Unavailable("sqlite: database is locked (another connection of this process "
                         "holds the write lock)");
    }
  }
  WARDEN_RETURN_IF_ERROR(db.ExecScript("BEGIN IMMEDIATE"));
  db.in_write_tx_ = true;
  return std::unique_ptr<WriteTx>(new WriteTx(db, std::move(writer)));
}

WriteTx::~WriteTx() {
  if (!done_) (void)db_.ExecScript("ROLLBACK");
  db_.in_write_tx_ = false;
}

Status WriteTx::Commit(const std::function<void()>& on_visible) {
  WARDEN_RETURN_IF_ERROR(db_.ExecScript("COMMIT"));
  done_ = true;
  db_.in_write_tx_ = false;
  if (writer_.owns_lock()) writer_.unlock();
  if (on_visible) on_visible();
  if (!db_.sync_commits_ || db_.unsynced_ > 0) return Status::Ok();
  if (const int rc = db_.SyncWal(); rc != SQLITE_OK) {
    // Committed and visible, but maybe not on disk: not an error to retry
    // (a retried enqueue would add the job twice).
    return DataLoss(std::string("sqlite: the write was committed but could not be synced to "
                                "disk: ") +
                    sqlite3_errstr(rc));
  }
  return Status::Ok();
}

// What `PRAGMA wal_autocheckpoint` would do by default: a hook of our own
// replaces SQLite's, so the hook checkpoints as SQLite's did.
constexpr int kAutoCheckpointFrames = 1000;

Status Db::SyncCommitsAfterUnlock() {
  WARDEN_RETURN_IF_ERROR(ExecScript("PRAGMA synchronous=NORMAL"));
  sync_commits_ = true;
  sqlite3_wal_hook(db_, &Db::OnWalCommit, this);
  return Status::Ok();
}

int Db::OnWalCommit(void* arg, sqlite3* db, const char* name, int frames) {
  auto* self = static_cast<Db*>(arg);
  if (frames >= kAutoCheckpointFrames) (void)sqlite3_wal_checkpoint(db, name);
  // A statement that was its own transaction is synced here (its error,
  // returned, becomes the statement's); WriteTx syncs after releasing
  // this process's writer lock too.
  if (self->in_write_tx_ || self->unsynced_ > 0) return SQLITE_OK;
  return self->SyncWal();
}

int Db::SyncWal() {
  sqlite3_file* wal = nullptr;
  const int rc = sqlite3_file_control(db_, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal);
  if (rc != SQLITE_OK) return rc;
  // After a commit in WAL mode the WAL is open; anything else would mean
  // a commit that nothing made durable.
  if (wal == nullptr || wal->pMethods == nullptr) return SQLITE_IOERR_FSYNC;
  return wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
}

}  // namespace warden::sqlite
