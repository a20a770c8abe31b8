// SQLite-only behaviour: what the file itself can do to us, and enqueueing
// inside the application's own transaction.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "store/store.h"
#include "warden/client.h"
#include "warden/sqlite.h"

namespace warden {
namespace {

class SqliteFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/warden-sqlite-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/jobs.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  sqlite3* Raw() {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    return db;
  }
  std::string dir_, path_;
};

TEST_F(SqliteFileTest, NewerSchemaIsRefusedAndLeftAlone) {
  ASSERT_TRUE(OpenStore(path_).has_value());
  sqlite3* db = Raw();
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO warden_schema VALUES (99)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = OpenStore(path_);
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.error().message().find("upgrade warden"), std::string::npos);
}

TEST_F(SqliteFileTest, NotADatabaseIsDataLossAndUntouched) {
  { std::ofstream(path_) << "this is not a database, it is a grocery list\n"; }
  const auto before = std::filesystem::file_size(path_);
  auto store = OpenStore(path_);
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), StatusCode::kDataLoss);
  EXPECT_EQ(std::filesystem::file_size(path_), before);
}

TEST_F(SqliteFileTest, MissingDirectoryIsUnavailable) {
  auto store = OpenStore(dir_ + "/no/such/dir/jobs.db");
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), StatusCode::kUnavailable);
}

TEST_F(SqliteFileTest, UnknownUrlOptionIsInvalid) {
  auto store = OpenStore("sqlite:" + path_ + "?fast=yes");
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), StatusCode::kInvalidArgument);
}

TEST_F(SqliteFileTest, EnqueueInsideTheApplicationsTransaction) {
  auto client = Client::Open(path_);
  ASSERT_TRUE(client.has_value());
  sqlite3* db = Raw();
  JobSpec spec;
  spec.task = "invoice";
  auto outside = EnqueueInSqliteTransaction(db, spec, 1000);
  ASSERT_FALSE(outside.has_value()) << "needs an open transaction";
  EXPECT_EQ(outside.error().code(), StatusCode::kFailedPrecondition);

  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto rolled = EnqueueInSqliteTransaction(db, spec, 1000);
  ASSERT_TRUE(rolled.has_value()) << rolled.error().ToString();
  ASSERT_EQ(sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_EQ((*client)->CountUnfinished().value(), 0) << "rolled back with the transaction";

  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto kept = EnqueueInSqliteTransaction(db, spec, 1000);
  ASSERT_TRUE(kept.has_value());
  ASSERT_EQ(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto job = (*client)->GetJob(kept->id);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->task, "invoice");
  EXPECT_EQ(job->state, JobState::kAvailable);

  spec.task = "";
  db = Raw();
  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_EQ(EnqueueInSqliteTransaction(db, spec, 1000).error().code(),
            StatusCode::kInvalidArgument);
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
}

TEST_F(SqliteFileTest, ClientRejectsBadSpecsBeforeStoringAnything) {
  auto client = Client::Open(path_);
  ASSERT_TRUE(client.has_value());
  JobSpec big;
  big.task = "t";
  big.payload = {{"blob", std::string(kMaxPayloadBytes, 'x')}};
  EXPECT_EQ((*client)->Enqueue(big).error().code(), StatusCode::kInvalidArgument);
  JobSpec no_task;
  EXPECT_EQ((*client)->Enqueue(no_task).error().code(), StatusCode::kInvalidArgument);
  JobSpec ok;
  ok.task = "t";
  std::vector<JobSpec> batch = {ok, no_task};
  EXPECT_FALSE((*client)->EnqueueMany(batch).has_value());
  EXPECT_EQ((*client)->CountUnfinished().value(), 0) << "a batch is all or nothing";
}

}  // namespace
}  // namespace warden
