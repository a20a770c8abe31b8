// The ceiling on SQLite: WAL, synchronous=FULL, prepared statements.
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>

#include "ceiling.h"

namespace bench {
namespace {

class SqliteCeiling : public CeilingStore {
 public:
  explicit SqliteCeiling(std::string path) : path_(std::move(path)) {}
  ~SqliteCeiling() override { Close(); }

  bool Reset() override {
    Close();
    std::error_code ec;
    for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + s, ec);
    if (sqlite3_open(path_.c_str(), &db_) != SQLITE_OK) return Fail("open");
    return Exec(
               "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
               "CREATE TABLE jobs (id INTEGER PRIMARY KEY, state INTEGER NOT NULL,"
               " lease_token INTEGER NOT NULL DEFAULT 0, payload TEXT NOT NULL);"
               "CREATE INDEX jobs_available ON jobs (id) WHERE state = 0;") &&
           Prepare("INSERT INTO jobs (state, payload) VALUES (0, '{}')", &insert_) &&
           Prepare(
               "UPDATE jobs SET state = 1, lease_token = lease_token + 1 WHERE id IN "
               "(SELECT id FROM jobs WHERE state = 0 ORDER BY id LIMIT ?) "
               "RETURNING id, lease_token",
               &claim_) &&
           Prepare("UPDATE jobs SET state = 2 WHERE id = ? AND lease_token = ? AND state = 1",
                   &complete_) &&
           Prepare("DELETE FROM jobs WHERE id = ? AND lease_token = ? AND state = 1", &delete_);
  }

  bool Insert(int batch) override {
    if (!Exec("BEGIN IMMEDIATE")) return false;
    for (int i = 0; i < batch; ++i) {
      if (sqlite3_step(insert_) != SQLITE_DONE) return Fail("insert");
      sqlite3_reset(insert_);
    }
    return Exec("COMMIT");
  }

  bool Claim(int batch, std::vector<Claimed>* out) override {
    out->clear();
    if (!Exec("BEGIN IMMEDIATE")) return false;
    sqlite3_bind_int(claim_, 1, batch);
    int rc;
    while ((rc = sqlite3_step(claim_)) == SQLITE_ROW) {
      out->push_back({sqlite3_column_int64(claim_, 0), sqlite3_column_int64(claim_, 1)});
    }
    sqlite3_reset(claim_);
    if (rc != SQLITE_DONE) return Fail("claim");
    return Exec("COMMIT");
  }

  bool Complete(const std::vector<Claimed>& jobs, bool remove) override {
    sqlite3_stmt* st = remove ? delete_ : complete_;
    if (!Exec("BEGIN IMMEDIATE")) return false;
    for (const Claimed& j : jobs) {
      sqlite3_bind_int64(st, 1, j.id);
      sqlite3_bind_int64(st, 2, j.token);
      if (sqlite3_step(st) != SQLITE_DONE || sqlite3_changes(db_) != 1) return Fail("complete");
      sqlite3_reset(st);
    }
    return Exec("COMMIT");
  }

 private:
  bool Fail(const char* what) {
    std::fprintf(stderr, "ceiling sqlite %s: %s\n", what, db_ ? sqlite3_errmsg(db_) : "?");
    return false;
  }
  bool Exec(const char* sql) {
    return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == SQLITE_OK || Fail(sql);
  }
  bool Prepare(const char* sql, sqlite3_stmt** st) {
    return sqlite3_prepare_v2(db_, sql, -1, st, nullptr) == SQLITE_OK || Fail(sql);
  }
  void Close() {
    for (sqlite3_stmt** st : {&insert_, &claim_, &complete_, &delete_}) {
      sqlite3_finalize(*st);
      *st = nullptr;
    }
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* claim_ = nullptr;
  sqlite3_stmt* complete_ = nullptr;
  sqlite3_stmt* delete_ = nullptr;
};

}  // namespace

std::unique_ptr<CeilingStore> OpenSqliteCeiling(const std::string& path) {
  return std::make_unique<SqliteCeiling>(path);
}

}  // namespace bench
