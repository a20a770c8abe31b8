// SqliteStore: opening, migrating, inserting, and helpers the other sqlite_store_*.cc share.
#include "store/sqlite/sqlite_store.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <span>
#include <thread>

#include "env/system_clock.h"
#include "store/sqlite/job_insert.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/wake_socket.h"

namespace warden::sqlite {
namespace {

// SQLite says only "unable to open database file", "disk I/O error" or
// "attempt to write a readonly database": name the usual cause. "" if none
// is found.
std::string WhyNotWritable(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) == 0) {
    if (fs.f_flag & ST_RDONLY) return " (it is on a read-only file system)";
    if (fs.f_bavail == 0) return " (its file system is full: no room for the -wal and -shm files)";
  }
  if (access(dir.c_str(), W_OK) != 0) {
    return " (no permission to write in '" + dir.string() +
           "', where the -wal and -shm files go)";
  }
  if (access(path.c_str(), F_OK) == 0 && access(path.c_str(), W_OK) != 0) {
    return " (no permission to write the file)";
  }
  return "";
}

// Switching a file to WAL takes its write lock as an upgrade of a read
// lock, and SQLite never calls the busy handler for an upgrade (two
// upgraders would wait on each other). So when two processes open one new
// file at once, one got "database is locked" straight away. Retry it
// within the busy timeout instead, as the busy handler would.
Status SwitchToWal(Db& db, std::chrono::milliseconds busy_timeout) {
  const auto give_up = std::chrono::steady_clock::now() + busy_timeout;
  for (int tries = 1;; ++tries) {
    Status s = db.ExecScript("PRAGMA journal_mode=WAL");
    if (s.ok() || (sqlite3_errcode(db.raw()) & 0xff) != SQLITE_BUSY ||
        std::chrono::steady_clock::now() >= give_up) {
      return s;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(tries, 10)));
  }
}

}  // namespace

Result<std::unique_ptr<Store>> SqliteStore::Open(const std::string& path,
                                                 StoreOptions options) {
  std::error_code exists_ec;
  if (!options.create_if_missing && !std::filesystem::exists(path, exists_ec)) {
    return NotFound("no database at '" + path +
                    "' (a command that only reads never creates one: check the path or "
                    "WARDEN_DB; `warden init` creates a database)");
  }
  auto opened = Db::Open(path, static_cast<int>(options.busy_timeout.count()));
  if (!opened.has_value()) {
    // SQLite only says "unable to open database file": name the usual cause.
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
      return Unavailable("cannot open database '" + path + "': directory '" + dir.string() +
                         "' does not exist");
    }
    return opened.error();
  }
  std::unique_ptr<Db> db = std::move(opened).value();
  auto refuse = [&path](const Status& s) {
    return Status(s.code(), "cannot use database '" + path + "': " + s.message() +
                                (s.code() == StatusCode::kUnavailable ? WhyNotWritable(path) : ""));
  };
  // Only reads: a file warden must not use is refused before the WAL switch
  // below (which rewrites the header) or a migration could change it.
  if (Status s = CheckBeforeUse(*db); !s.ok()) return refuse(s);
  // journal_mode=WAL needs the write lock once on a fresh file.
  if (Status s = SwitchToWal(*db, options.busy_timeout); !s.ok()) return refuse(s);
  WARDEN_RETURN_IF_ERROR(options.durable ? db->SyncCommitsAfterUnlock()
                                         : db->ExecScript("PRAGMA synchronous=NORMAL"));
  const Clock* clock = options.clock ? options.clock : &SystemClock::Get();
  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(db), clock, WakeDirFor(path)));
  if (Status s = store->Migrate(); !s.ok()) return refuse(s);
  return std::unique_ptr<Store>(std::move(store));
}

Status SqliteStore::Migrate() {
  MutexLock lock(mu_);
  return sqlite::Migrate(*db_);
}

Status SqliteStore::CheckWritable() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  return Status::Ok();  // rolled back
}

Result<int> SqliteStore::SchemaVersion() {
  MutexLock lock(mu_);
  return ReadSchemaVersion(*db_);
}

Result<std::vector<EnqueueResult>> SqliteStore::JobInsertMany(std::span<const JobSpec> specs) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(std::vector<EnqueueResult> out, InsertJobs(*db_, specs, now));
  // Workers are woken as soon as the jobs are visible: the sync that makes
  // them durable, before this call returns, need not delay their start.
  WARDEN_RETURN_IF_ERROR(tx->Commit([this] { warden::NotifyWorkers(wake_dir_); }));
  return out;
}

Result<bool> SqliteStore::ExistsLocked(const std::string& sql, int64_t arg) {
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("SELECT EXISTS (" + sql + ")"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Bind(1, arg).Step());
  const bool exists = row && q.Int(0) != 0;
  q.Reset();
  return exists;
}

}  // namespace warden::sqlite
