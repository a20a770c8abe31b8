// Rows "corrupt / truncated / foreign / newer SQLite file" of
// docs/bad-input.md: a file warden cannot use is refused when it is opened,
// with one line and exit 1 from every command (kDataLoss or
// kFailedPrecondition from the API), and the file is left byte for byte as
// it was. Damage inside a page is found when a command reads that page.
//
// SQLite only: these are files on disk; a PostgreSQL database is a server's
// business (its counterparts are in vanish_test.cc).
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <random>

#include "bad_input.h"
#include "store/sqlite/schema.h"
#include "warden/sqlite.h"

namespace bi {
namespace {

using warden::StatusCode;

constexpr size_t kPage = 4096;  // SQLite's default page size

class SqliteFileTest : public BadInputTest {
 protected:
  // A warden database holding `jobs` jobs of 3 KB each, checkpointed (no
  // -wal file: everything is in the file itself). Returns its bytes.
  std::string MakeDatabase(const std::string& path, int jobs = 20) {
    {
      auto client = warden::Client::Open(path);
      EXPECT_TRUE(client.has_value()) << client.error().ToString();
      if (!client.has_value()) return "";
      for (int i = 0; i < jobs; ++i) {
        warden::JobSpec s;
        s.task = "t";
        s.payload = {{"i", i}, {"pad", std::string(3000, 'p')}};
        EXPECT_TRUE((*client)->Enqueue(s).has_value());
      }
    }
    // Closing the last connection checkpoints the WAL and removes it.
    EXPECT_FALSE(Exists(path + "-wal"));
    return Bytes(path);
  }
  // The 1-based root page of `name` in sqlite_master (0 if none).
  static int RootPage(const std::string& path, const std::string& name) {
    sqlite3* db = nullptr;
    int page = 0;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
      sqlite3_stmt* q = nullptr;
      sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_master WHERE name = ?", -1, &q, nullptr);
      sqlite3_bind_text(q, 1, name.c_str(), -1, SQLITE_TRANSIENT);
      if (sqlite3_step(q) == SQLITE_ROW) page = sqlite3_column_int(q, 0);
      sqlite3_finalize(q);
    }
    sqlite3_close(db);
    return page;
  }
  // Every command of EveryKindOfCommand() fails with exit 1 and one line
  // containing `says`, and the file's bytes stay `bytes`.
  void ExpectRefusedAndUntouched(const std::string& path, const std::string& bytes,
                                 const std::string& says) {
    for (const auto& args : EveryKindOfCommand()) {
      CliResult r = Warden(path, args);
      EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
      EXPECT_TRUE(OneLineError(r, says)) << args[0];
      EXPECT_EQ(r.out, "") << args[0];
    }
    EXPECT_TRUE(Bytes(path) == bytes) << path << " was modified";
  }
  void ExpectApiRefuses(const std::string& path, StatusCode code, const std::string& says) {
    auto c = warden::Client::Open(path);
    ASSERT_FALSE(c.has_value());
    EXPECT_EQ(c.error().code(), code) << c.error().ToString();
    EXPECT_NE(c.error().message().find(says), std::string::npos) << c.error().ToString();
    warden::WorkerOptions o;
    o.allow_commands = true;
    auto w = warden::Worker::Create(path, o);
    ASSERT_FALSE(w.has_value());
    EXPECT_EQ(w.error().code(), code) << w.error().ToString();
  }
};

TEST_P(SqliteFileTest, RandomBytesAreRefusedAtOpenAndLeftUntouched) {
  const std::string path = dir() + "/random.db";
  std::mt19937 rng(20261121);  // fixed: the same bytes every run
  std::string bytes(16 * kPage, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  WriteBytes(path, bytes);
  ExpectRefusedAndUntouched(path, bytes, "cannot use database '" + path + "'");
  ExpectApiRefuses(path, StatusCode::kDataLoss, "file is not a database");
  EXPECT_TRUE(Bytes(path) == bytes);
  EXPECT_FALSE(Exists(path + "-wal") || Exists(path + "-shm"));
}

TEST_P(SqliteFileTest, FileThatIsNotSqliteIsRefusedAndLeftUntouched) {
  const std::string path = dir() + "/notes.txt";
  std::string text = "Shopping list\n";
  for (int i = 0; i < 500; ++i) text += "- item " + std::to_string(i) + "\n";
  WriteBytes(path, text);
  ExpectRefusedAndUntouched(path, text, "file is not a database");
  ExpectApiRefuses(path, StatusCode::kDataLoss, "not a warden database");
  // A directory where the file should be.
  CliResult r = Warden(dir(), {"stats"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(OneLineError(r, "cannot open database '" + dir() + "'"));
}

TEST_P(SqliteFileTest, OverwrittenFirstPageIsRefusedAtOpenAndLeftUntouched) {
  const std::string path = dir() + "/jobs.db";
  std::string bytes = MakeDatabase(path);
  ASSERT_GT(bytes.size(), 10 * kPage);
  bytes.replace(0, kPage, std::string(kPage, '\xA5'));  // header and schema
  WriteBytes(path, bytes);
  ExpectRefusedAndUntouched(path, bytes, "file is not a database");
  ExpectApiRefuses(path, StatusCode::kDataLoss, "file is not a database");
}

TEST_P(SqliteFileTest, OverwrittenTablePageIsDataLossWhenRead) {
  const std::string path = dir() + "/jobs.db";
  const std::string pristine = MakeDatabase(path);
  // Opening reads only the schema: the damage is found by what reads the
  // page. `jobs` lists the jobs table; `jobs show` reads a job's attempts;
  // `stats` reads the workers table (its job counts come from job_counts,
  // not from the jobs).
  const std::vector<std::pair<std::string, std::vector<std::string>>> reads = {
      {"jobs", {"jobs"}}, {"attempts", {"jobs", "show", "1"}}, {"workers", {"stats"}}};
  for (const auto& [table, command] : reads) {
    const int page = RootPage(path, table);
    ASSERT_GT(page, 1) << table;
    std::string bytes = pristine;
    bytes.replace((page - 1) * kPage, kPage, std::string(kPage, '\xA5'));
    WriteBytes(path, bytes);
    CliResult r = Warden(path, command);
    EXPECT_EQ(r.exit_code, 1) << table << ": " << r.err;
    EXPECT_TRUE(OneLineError(r, "sqlite: database disk image is malformed")) << table;
    EXPECT_TRUE(Bytes(path) == bytes) << table << ": the file was modified";
  }
}

TEST_P(SqliteFileTest, WorkerOnADamagedJobsTableSaysDataLoss) {
  const std::string path = dir() + "/jobs.db";
  std::string bytes = MakeDatabase(path);
  const int page = RootPage(path, "jobs");
  ASSERT_GT(page, 1);
  bytes.replace((page - 1) * kPage, kPage, std::string(kPage, '\xA5'));
  WriteBytes(path, bytes);
  auto w = wt::Child::Spawn({WARDEN_BIN, "--db", path, "worker", "--task", "t=true"},
                            dir() + "/w.out", dir() + "/w.log");
  ASSERT_TRUE(wt::WaitFor([&] {
    return w->Exited() || w->Stderr().find("data loss") != std::string::npos;
  })) << w->Stderr();
  EXPECT_NE(w->Stderr().find("database disk image is malformed"), std::string::npos)
      << w->Stderr();
  // It stops by itself rather than retrying (and heartbeating) for ever.
  ASSERT_TRUE(w->WaitExit(Millis(30'000))) << w->Stderr();
  EXPECT_EQ(w->ExitCode(), 1) << w->Stderr();
  EXPECT_NE(w->Stderr().find("stopping: data loss"), std::string::npos) << w->Stderr();
}

TEST_P(SqliteFileTest, TruncatedDatabaseIsRefusedAtOpenAndLeftUntouched) {
  const std::string path = dir() + "/jobs.db";
  const std::string pristine = MakeDatabase(path);
  ASSERT_GT(pristine.size(), 10 * kPage);
  const size_t half_pages = pristine.size() / kPage / 2 * kPage;
  for (const size_t size : {half_pages, half_pages + 1000, size_t{100}}) {
    const std::string bytes = pristine.substr(0, size);
    WriteBytes(path, bytes);
    SCOPED_TRACE("cut to " + std::to_string(size) + " bytes");
    ExpectRefusedAndUntouched(path, bytes, "cannot use database '" + path + "'");
    ExpectApiRefuses(path, StatusCode::kDataLoss, "cannot use database");
  }
}

TEST_P(SqliteFileTest, NewerSchemaIsRefusedAndLeftUntouched) {
  const std::string path = dir() + "/jobs.db";
  MakeDatabase(path, 3);
  ASSERT_EQ(SqliteExec(path, "INSERT INTO warden_schema VALUES (999)"), "");
  const std::string bytes = Bytes(path);
  ASSERT_FALSE(Exists(path + "-wal"));
  ExpectRefusedAndUntouched(path, bytes,
                            "cannot use database '" + path +
                                "': the database has schema version 999, newer than this "
                                "warden knows (" +
                                std::to_string(warden::sqlite::kSchemaVersion) +
                                "): upgrade warden");
  ExpectApiRefuses(path, StatusCode::kFailedPrecondition, "upgrade warden");
}

TEST_P(SqliteFileTest, AnotherApplicationsDatabaseWithWardensNamesIsRefusedAndUntouched) {
  const std::string path = dir() + "/crm.db";
  // Rollback-journal mode, as most applications leave it: switching it to
  // WAL would rewrite the header.
  for (const char* schema :
       {"CREATE TABLE jobs (id INTEGER PRIMARY KEY, title TEXT); "
        "INSERT INTO jobs VALUES (1, 'plumber');",
        "CREATE TABLE tasks (id INTEGER PRIMARY KEY, state TEXT); "
        "CREATE INDEX jobs_state ON tasks (state); INSERT INTO tasks VALUES (1, 'open');"}) {
    std::filesystem::remove(path);
    ASSERT_EQ(SqliteExec(path, schema), "");
    const std::string bytes = Bytes(path);
    ExpectRefusedAndUntouched(path, bytes, "another application's SQLite database");
    ExpectApiRefuses(path, StatusCode::kFailedPrecondition, "that warden did not create");
  }
}

TEST_P(SqliteFileTest, AnotherApplicationsDatabaseWithoutClashesGetsWardensTablesBeside) {
  // By design: enqueueing inside the application's own transaction
  // (warden/sqlite.h) needs warden's tables in the application's file.
  const std::string path = dir() + "/shop.db";
  ASSERT_EQ(SqliteExec(path,
                       "CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL); "
                       "INSERT INTO orders VALUES (42, 99.5);"),
            "");
  CliResult r = Warden(path, {"--json", "add", "send-receipt", R"({"order": 42})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT id, total FROM orders", -1, &q, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), 42);
  EXPECT_EQ(sqlite3_column_double(q, 1), 99.5);
  EXPECT_EQ(sqlite3_step(q), SQLITE_DONE);
  sqlite3_finalize(q);
  sqlite3_close(db);
  auto c = warden::Client::Open(path);
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ((*c)->CountUnfinished().value(), 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, SqliteFileTest, ::testing::Values(wt::Backend::kSqlite),
                         wt::BackendName);

}  // namespace
}  // namespace bi
