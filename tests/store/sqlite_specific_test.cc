// SQLite-only behaviour: what the file itself can do to us, and enqueueing
// inside the application's own transaction.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/sqlite_store.h"
#include "store/store.h"
#include "warden/client.h"
#include "warden/sqlite.h"
#include "store_fixture.h"
#include "wal_watch.h"

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

// Schema 15 keeps each worker's keepalive threshold; a worker registered
// before it gets 10 s, the default every worker had.
TEST_F(SqliteFileTest, SchemaFourteenWorkersGetTheDefaultKeepalive) {
  {
    auto store = OpenStore(path_);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    WorkerRegistration r = testing::TestWorker("old");
    r.keepalive = Millis(2'000);
    ASSERT_TRUE((*store)->WorkerRegister(r).has_value());
  }
  sqlite3* db = Raw();
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE workers DROP COLUMN keepalive_ms; "
                         "ALTER TABLE api_tokens DROP COLUMN last_used_at; "
                         "ALTER TABLE api_tokens DROP COLUMN expires_at; "
                         "DROP TABLE job_actions; ALTER TABLE bulk_ops DROP COLUMN fresh; "
                         "DELETE FROM warden_schema WHERE version > 14",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  auto store = OpenStore(path_);
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  EXPECT_EQ((*store)->SchemaVersion().value(), sqlite::kSchemaVersion);
  const auto workers = (*store)->WorkerList(false).value();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].keepalive, Millis(10'000));
}

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

// Schema 9 keeps the jobs by queue and state (job_counts): a
// database of schema 8 gets them counted from the jobs it holds, in the
// migration's transaction, and they stay exact as jobs change after.
TEST_F(SqliteFileTest, SchemaEightDatabaseGetsItsJobCountsFromItsJobs) {
  {
    auto store = OpenStore(path_);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    std::vector<JobSpec> specs(7);
    for (size_t i = 0; i < specs.size(); ++i) {
      specs[i].task.push_back('t');
      specs[i].queue = i % 2 ? "odd" : "even";
      if (i == 6) specs[i].delay = std::chrono::hours(1);
    }
    ASSERT_TRUE((*store)->JobInsertMany(specs).has_value());
  }
  sqlite3* db = Raw();
  ASSERT_EQ(sqlite3_exec(
                db,
                "DROP TABLE job_counts; "
                "DROP INDEX jobs_crash_loop; DROP INDEX fenced_writes_job; "
                "DROP INDEX jobs_due_group; "
                "ALTER TABLE attempts DROP COLUMN lost_by; "
                "ALTER TABLE attempts DROP COLUMN runnable_at; "
                "ALTER TABLE workers DROP COLUMN host; DROP INDEX workers_node; DROP TABLE nodes; "
                "ALTER TABLE jobs DROP COLUMN avoid_node; "
                "ALTER TABLE jobs DROP COLUMN avoid_until; "
                "ALTER TABLE workers DROP COLUMN keepalive_ms; "
                "ALTER TABLE api_tokens DROP COLUMN last_used_at; "
                "ALTER TABLE api_tokens DROP COLUMN expires_at; "
                "DROP TABLE job_actions; ALTER TABLE bulk_ops DROP COLUMN fresh; "
                "DELETE FROM warden_schema WHERE version > 8; "
                "UPDATE jobs SET state = 'dead' WHERE id = 1",
                nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  auto store = OpenStore(path_);
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  EXPECT_EQ((*store)->SchemaVersion().value(), sqlite::kSchemaVersion);
  EXPECT_TRUE((*store)->JobCountsVerify().value().empty());
  const std::vector<QueueInfo> queues = (*store)->QueueList().value();
  ASSERT_EQ(queues.size(), 2u);
  EXPECT_EQ(queues[0].name, "even");
  EXPECT_EQ(queues[0].jobs, (std::vector<std::pair<std::string, int64_t>>{
                                {"available", 2}, {"dead", 1}, {"scheduled", 1}}));
  EXPECT_EQ(queues[1].jobs, (std::vector<std::pair<std::string, int64_t>>{{"available", 3}}));
  ASSERT_TRUE((*store)->JobRetry(1, {}, {}).ok());
  EXPECT_TRUE((*store)->JobCountsVerify().value().empty());
  EXPECT_EQ((*store)->QueueList().value()[0].CountIn(JobState::kAvailable), 3);
}

// Schema 11 keeps the counts by task and command too, and indexes the
// scheduled and retryable jobs by group (jobs_due_group): a database of
// schema 10 (its job_counts by queue and state only) gets them counted from
// its jobs, and JobBacklog reads them.
TEST_F(SqliteFileTest, SchemaTenDatabaseGetsItsGroupCountsFromItsJobs) {
  {
    auto store = OpenStore(path_);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    std::vector<JobSpec> specs(6);
    for (size_t i = 0; i < specs.size(); ++i) {
      specs[i].task = i % 2 ? "odd" : "even";
      if (i == 4) specs[i].command = "true";
      if (i == 5) specs[i].delay = std::chrono::hours(1);
    }
    ASSERT_TRUE((*store)->JobInsertMany(specs).has_value());
  }
  sqlite3* db = Raw();
  ASSERT_EQ(sqlite3_exec(
                db,
                "DROP TABLE job_counts; DROP INDEX jobs_due_group; "
                "CREATE TABLE job_counts (queue TEXT NOT NULL, state TEXT NOT NULL, "
                "n INTEGER NOT NULL, PRIMARY KEY (queue, state)) WITHOUT ROWID; "
                "INSERT INTO job_counts SELECT queue, state, count(*) FROM jobs "
                "GROUP BY 1, 2; "
                "ALTER TABLE workers DROP COLUMN host; DROP INDEX workers_node; DROP TABLE nodes; "
                "ALTER TABLE jobs DROP COLUMN avoid_node; "
                "ALTER TABLE jobs DROP COLUMN avoid_until; "
                "ALTER TABLE workers DROP COLUMN keepalive_ms; "
                "ALTER TABLE api_tokens DROP COLUMN last_used_at; "
                "ALTER TABLE api_tokens DROP COLUMN expires_at; "
                "DROP TABLE job_actions; ALTER TABLE bulk_ops DROP COLUMN fresh; "
                "DELETE FROM warden_schema WHERE version > 10",
                nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  auto store = OpenStore(path_);
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  EXPECT_EQ((*store)->SchemaVersion().value(), sqlite::kSchemaVersion);
  EXPECT_TRUE((*store)->JobCountsVerify().value().empty());
  const std::vector<BacklogGroup> backlog = (*store)->JobBacklog({}).value();
  ASSERT_EQ(backlog.size(), 4u);
  EXPECT_EQ(backlog[0].task, "even");
  EXPECT_EQ(backlog[0].count, 2);
  EXPECT_TRUE(backlog[1].command);  // "even", but a command
  EXPECT_EQ(backlog[1].count, 1);
  EXPECT_EQ(backlog[2].task, "odd");
  EXPECT_EQ(backlog[2].count, 2);
  EXPECT_EQ(backlog[3].state, JobState::kScheduled);
  EXPECT_GT(backlog[3].next_run_at, 0);
  ASSERT_TRUE((*store)->JobCancel(1, {}).has_value());
  EXPECT_TRUE((*store)->JobCountsVerify().value().empty());
  EXPECT_EQ((*store)->JobBacklog({}).value()[0].count, 1);
}

// Schema 12 adds flow control (queue_limits, queue_starts): a database of
// schema 11 with jobs gets the tables, and its queues can be limited.
TEST_F(SqliteFileTest, SchemaElevenDatabaseGetsFlowControl) {
  {
    auto store = OpenStore(path_);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    std::vector<JobSpec> specs(3);
    for (JobSpec& s : specs) s.task.push_back('t');
    ASSERT_TRUE((*store)->JobInsertMany(specs).has_value());
  }
  sqlite3* db = Raw();
  ASSERT_EQ(sqlite3_exec(
                db,
                "DROP TABLE queue_limits; DROP TABLE queue_starts; "
                "ALTER TABLE workers DROP COLUMN host; DROP INDEX workers_node; DROP TABLE nodes; "
                "ALTER TABLE jobs DROP COLUMN avoid_node; "
                "ALTER TABLE jobs DROP COLUMN avoid_until; "
                "ALTER TABLE workers DROP COLUMN keepalive_ms; "
                "ALTER TABLE api_tokens DROP COLUMN last_used_at; "
                "ALTER TABLE api_tokens DROP COLUMN expires_at; "
                "DROP TABLE job_actions; ALTER TABLE bulk_ops DROP COLUMN fresh; "
                "DELETE FROM warden_schema WHERE version > 11",
                nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  auto store = OpenStore(path_);
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  EXPECT_EQ((*store)->SchemaVersion().value(), sqlite::kSchemaVersion);
  QueueLimits one;
  one.concurrency = 1;
  ASSERT_TRUE((*store)->QueueSetLimits("default", one, {}).value());
  WorkerRegistration r;
  r.name.push_back('w');
  r.queues = {"default"};
  r.tasks = {"t"};
  const WorkerId w = (*store)->WorkerRegister(r).value();
  ClaimParams p;
  p.worker = w;
  p.queues = {"default"};
  p.tasks = {"t"};
  p.limit = 3;
  EXPECT_EQ((*store)->JobClaim(p).value().size(), 1u) << "the limit holds on the old jobs";
}

// An application's own transaction's enqueue is counted too.
TEST_F(SqliteFileTest, AnApplicationsEnqueueIsCounted) {
  ASSERT_TRUE(OpenStore(path_).has_value());
  sqlite3* db = Raw();
  JobSpec spec;
  spec.task.push_back('t');
  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_TRUE(EnqueueInSqliteTransaction(db, spec, 1000).has_value());
  ASSERT_EQ(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = OpenStore(path_);
  ASSERT_TRUE(store.has_value());
  EXPECT_TRUE((*store)->JobCountsVerify().value().empty());
  EXPECT_EQ((*store)->JobCountUnfinished().value(), 1);
}

// Opening a new file switches it to WAL, under the write lock taken as an
// upgrade of a read lock, and SQLite never waits for an upgrade. A second
// process creating the same file at once got "database is locked" about
// one time in five (two `warden init` at once). Open now waits for the
// lock within its busy timeout (5 s here).
TEST_F(SqliteFileTest, OpeningANewFileWaitsForAnotherWriterInsteadOfFailing) {
  sqlite3* other = Raw();  // the new file, still in rollback-journal mode
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto opening = std::async(std::launch::async, [&] { return OpenStore(path_); });
  EXPECT_EQ(opening.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "Open gave up while another connection held the write lock";
  ASSERT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  auto store = opening.get();
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  auto client = Client::Open(path_);
  ASSERT_TRUE(client.has_value()) << client.error().ToString();
  JobSpec spec;
  spec.task.push_back('t');  // (assigning "t" trips a false -Wrestrict in g++ 12)
  EXPECT_TRUE((*client)->Enqueue(spec).has_value());
}

// The query plan of `sql` on `db`, one step per line.
std::string PlanOf(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* plan = nullptr;
  const std::string explain = fmt::format("EXPLAIN QUERY PLAN {}", sql);
  if (sqlite3_prepare_v2(db, explain.c_str(), -1, &plan, nullptr) != SQLITE_OK) {
    return fmt::format("cannot prepare: {}", sqlite3_errmsg(db));
  }
  std::string steps;
  while (sqlite3_step(plan) == SQLITE_ROW) {
    steps.append(reinterpret_cast<const char*>(sqlite3_column_text(plan, 3)));
    steps.push_back('\n');
  }
  sqlite3_finalize(plan);
  return steps;
}

// The steps of `plan` that read a whole table: a SCAN not through an index,
// other than of a JSON list of ids or of a constant row.
std::vector<std::string> FullScans(const std::string& plan) {
  std::vector<std::string> scans;
  for (size_t at = plan.find("SCAN "); at != std::string::npos; at = plan.find("SCAN ", at + 1)) {
    const std::string step = plan.substr(at, plan.find('\n', at) - at);
    if (step.find("INDEX") != std::string::npos || step.find("json_each") != std::string::npos ||
        step.find("CONSTANT ROW") != std::string::npos || step.rfind("SCAN d ", 0) == 0 ||
        step.rfind("SCAN (subquery", 0) == 0 ||
        step.rfind("SCAN page", 0) == 0) {  // a listing's page: at most its limit
      continue;
    }
    // The kept counts (schema 9), a row per queue and state, not per job;
    // kQueueCountsSql's walks over them (c), a queue's priorities (p) and
    // its oldest job (o).
    const std::string table = step.substr(5, step.find(' ', 5) - 5);
    if (table == "job_counts" || table == "c" || table == "p" || table == "o") {
      continue;
    }
    scans.push_back(step);
  }
  return scans;
}

// A claim walks the claim index in order and stops at its limit, however
// long the backlog, for a worker of one queue or several. `queue IN (a, b)`
// sorted every available job of those queues (a temp B-tree) on each
// claim: 0.66 s a claim with 1M queued.
TEST_F(SqliteFileTest, ClaimReadsTheClaimIndexInOrderForOneQueueOrSeveral) {
  ASSERT_TRUE(OpenStore(path_).has_value());
  sqlite3* db = Raw();
  for (const std::vector<std::string>& queues :
       {std::vector<std::string>{"a"}, {"a", "b"}, {"a", "b", "c"}}) {
    ClaimParams p;
    p.queues = queues;
    p.tasks = {"t", "u"};
    const std::string steps = PlanOf(db, sqlite::PickSql(p));
    ASSERT_EQ(steps.find("cannot prepare"), std::string::npos) << steps;
    int claim_index_walks = 0;
    for (size_t at = steps.find("USING INDEX jobs_claim (queue=?)"); at != std::string::npos;
         at = steps.find("USING INDEX jobs_claim (queue=?)", at + 1)) {
      ++claim_index_walks;
    }
    EXPECT_EQ(steps.find("TEMP B-TREE"), std::string::npos) << steps;
    EXPECT_EQ(claim_index_walks, static_cast<int>(queues.size())) << steps;
  }
  sqlite3_close(db);
}

// jobs_state leaves running jobs out, so that a job's usual life rewrites
// fewer index entries. Listing and counting by state must still read an
// index, not every job ever kept: a plain `state = ?` cannot use a partial
// index, and reads the whole table.
TEST_F(SqliteFileTest, ListsAndCountsByStateReadAnIndexNotTheTable) {
  ASSERT_TRUE(OpenStore(path_).has_value());
  sqlite3* db = Raw();
  // The counts by state read job_counts (schema 9), no job at all: checked
  // with the claim's statements below.
  std::vector<std::string> queries;
  for (JobState state : {JobState::kScheduled, JobState::kAvailable, JobState::kRunning,
                         JobState::kRetryable, JobState::kSucceeded, JobState::kDead,
                         JobState::kCancelled, JobState::kExpired}) {
    JobFilter f;
    f.states = {state};
    queries.push_back(sqlite::JobListSql(f, false));
    f.queue.push_back('q');  // (assigning "q" trips a false -Wrestrict in g++ 12)
    queries.push_back(sqlite::JobListSql(f, false));
    f.task.push_back('t');
    queries.push_back(sqlite::JobListSql(f, true));
  }
  // Several states: one arm per state, each through its own index, and the
  // total counted the same way.
  JobFilter several;
  several.states = {JobState::kDead, JobState::kRunning, JobState::kRetryable,
                    JobState::kAvailable};
  queries.push_back(sqlite::JobListSql(several, false));
  queries.push_back(sqlite::JobListSql(several, true));
  for (const std::string& sql : queries) {
    const std::string plan = PlanOf(db, sql);
    EXPECT_NE(plan.find("INDEX"), std::string::npos) << sql << "\n" << plan;
    EXPECT_TRUE(FullScans(plan).empty()) << "a full scan: " << sql << "\n" << plan;
  }
  sqlite3_close(db);
}

// A page past a cursor reads the same index as the first page (by state),
// or the primary key backwards from the cursor; a bulk operation's batch
// reads the table by rowid down from its cursor, never a state's index in
// full (the batches together then read each row once).
TEST_F(SqliteFileTest, CursorPagesAndBulkBatchesReadFromTheCursor) {
  ASSERT_TRUE(OpenStore(path_).has_value());
  sqlite3* db = Raw();
  JobFilter page;
  page.before_id = 1000;
  std::string plan = PlanOf(db, sqlite::JobListSql(page, true));
  EXPECT_NE(plan.find("INTEGER PRIMARY KEY (rowid<?)"), std::string::npos) << plan;
  page.states = {JobState::kDead};
  plan = PlanOf(db, sqlite::JobListSql(page, true));
  EXPECT_NE(plan.find("jobs_state (state=? AND id<?)"), std::string::npos) << plan;
  EXPECT_TRUE(FullScans(plan).empty()) << plan;
  for (BulkAction a : {BulkAction::kRetry, BulkAction::kCancel, BulkAction::kDelete}) {
    JobFilter batch = BulkScope(a, JobFilter{}).value();
    batch.before_id = 1000;
    batch.max_id = 5000;
    batch.queue.push_back('q');  // (see below: -Wrestrict)
    const std::string sql = sqlite::JobScanIdsSql(batch);
    plan = PlanOf(db, sql);
    EXPECT_NE(plan.find("USING INTEGER PRIMARY KEY (rowid<?"), std::string::npos)
        << sql << "\n" << plan;
    EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;
  }
  sqlite3_close(db);
}

// A claim, the read of its jobs and a batch of plain successes take their
// jobs from a JSON list of ids, one statement each: each job is found by
// its id. A plan that scanned the table would cost a pass over every job.
TEST_F(SqliteFileTest, BatchWritesFindEachJobByItsId) {
  ASSERT_TRUE(OpenStore(path_).has_value());
  sqlite3* db = Raw();
  for (const std::string sql : {sqlite::kClaimSql, sqlite::kFencePlainSql,
                                sqlite::kReadClaimedSql.c_str(), sqlite::kSucceedPlainSql}) {
    const std::string plan = PlanOf(db, sql);
    EXPECT_NE(plan.find("USING INTEGER PRIMARY KEY (rowid=?)"), std::string::npos) << plan;
    // No step reads the whole table (scanning the list, json_each or d, is fine).
    EXPECT_TRUE(FullScans(plan).empty()) << sql << "\n" << plan;
  }
  sqlite3_close(db);
}

// With statistics (a user's ANALYZE, or `PRAGMA optimize`, which SQLite
// advises running now and then), SQLite chose a scan of the whole table
// for the look before each claim: it passed every finished job first, and
// a worker ran 7x slower. Statistics of a queue that has run many jobs and
// has some left must not move a claim, its look or its batch writes off
// their indexes.
TEST_F(SqliteFileTest, ClaimStatementsKeepTheirIndexesAfterAnalyze) {
  {
    auto client = Client::Open(path_);
    ASSERT_TRUE(client.has_value()) << client.error().ToString();
    std::vector<JobSpec> specs(3000);
    for (JobSpec& spec : specs) spec.task.push_back('t');  // (see above: -Wrestrict)
    ASSERT_TRUE((*client)->EnqueueMany(specs).has_value());
  }
  sqlite3* db = Raw();
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE jobs SET state = 'succeeded', finished_at = 1 WHERE id <= 1000; "
                         "ANALYZE",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  std::vector<std::string> queries = {sqlite::kClaimSql, sqlite::kFencePlainSql,
                                      sqlite::kReadClaimedSql, sqlite::kSucceedPlainSql,
                                      sqlite::kJobCountsSql, sqlite::kCountUnfinishedSql,
                                      sqlite::kQueueCountsSql};
  for (const std::vector<std::string>& queues :
       {std::vector<std::string>{"default"}, {"default", "b"}}) {
    ClaimParams p;
    p.queues = queues;
    p.tasks = {"t"};
    queries.push_back(sqlite::PickSql(p));
    queries.push_back(sqlite::AnyClaimableSql(p));
  }
  for (const std::string& sql : queries) {
    const std::string plan = PlanOf(db, sql);
    ASSERT_EQ(plan.find("cannot prepare"), std::string::npos) << sql << "\n" << plan;
    EXPECT_TRUE(FullScans(plan).empty()) << "a full scan: " << sql << "\n" << plan;
  }
  sqlite3_close(db);
}

// A claim reads its jobs whole after its commit, outside the write lock
// (SqliteStore::JobClaim). A job whose row no longer carries the claim's
// token by then (taken over while this process was frozen) is left out,
// and the worker's heartbeats find it held and hand it back
// (core/lost_claims.h). A trigger stands in for the other writer: it moves
// one job's token on within the claim's own statement.
TEST_F(SqliteFileTest, AClaimReturnsOnlyTheJobsStillUnderItsToken) {
  auto store = OpenStore(path_);
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  JobSpec spec;
  spec.task.push_back('t');
  const std::vector<JobSpec> specs(3, spec);
  auto added = (*store)->JobInsertMany(specs);
  ASSERT_TRUE(added.has_value()) << added.error().ToString();
  const JobId taken = (*added)[1].id;
  sqlite3* db = Raw();
  const std::string trigger = fmt::format(
      "CREATE TRIGGER take_over AFTER UPDATE OF state ON jobs WHEN new.id = {} AND "
      "new.state = 'running' BEGIN UPDATE jobs SET lease_token = lease_token + 1 WHERE id = "
      "new.id; END",
      taken);
  ASSERT_EQ(sqlite3_exec(db, trigger.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto worker = (*store)->WorkerRegister(testing::TestWorker());
  ASSERT_TRUE(worker.has_value()) << worker.error().ToString();
  ClaimParams p;
  p.worker = *worker;
  p.queues = {"default"};
  p.tasks = {"t"};
  p.limit = 10;
  auto claimed = (*store)->JobClaim(p);
  ASSERT_TRUE(claimed.has_value()) << claimed.error().ToString();
  std::vector<JobId> ids;
  for (const JobInfo& job : *claimed) ids.push_back(job.id);
  EXPECT_EQ(ids, (std::vector<JobId>{(*added)[0].id, (*added)[2].id}));
  auto heartbeat = (*store)->WorkerHeartbeat(*worker);
  ASSERT_TRUE(heartbeat.has_value()) << heartbeat.error().ToString();
  std::vector<JobId> held;
  for (const JobRef& ref : heartbeat->held) held.push_back(ref.id);
  std::sort(held.begin(), held.end());
  EXPECT_EQ(held, (std::vector<JobId>{(*added)[0].id, taken, (*added)[2].id}));
}

// The definitions of jobs_state, attempts_outcome, attempts_lost and
// jobs_running_lease in the file, in name order.
std::string IndexSql(sqlite3* db) {
  sqlite3_stmt* q = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT group_concat(name || ': ' || sql, '; ') FROM "
                               "(SELECT name, sql FROM sqlite_master WHERE name IN "
                               "('jobs_state', 'attempts_outcome', 'attempts_lost', "
                               "'jobs_running_lease') ORDER BY name)",
                               -1, &q, nullptr),
            SQLITE_OK);
  EXPECT_EQ(sqlite3_step(q), SQLITE_ROW);
  std::string sql = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
  sqlite3_finalize(q);
  return sql;
}

// A version-1 file (made here by undoing migrations 4, 3 and 2) gets the
// later indexes and columns on open, and keeps its jobs. Two of them were
// claimed by a warden of before schema 3, which wrote their attempts at the
// claim: they end under the new one, which records the success in the job
// row and the failure in the old row.
TEST_F(SqliteFileTest, VersionOneFileIsMigratedAndKeepsItsJobsAndAttempts) {
  WorkerId w = 0;
  std::vector<JobInfo> claimed;
  {
    auto store = OpenStore(path_);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    JobSpec spec;
    spec.task = "t";
    std::vector<JobSpec> specs(3, spec);
    ASSERT_TRUE((*store)->JobInsertMany(specs).has_value());
    w = (*store)->WorkerRegister(testing::TestWorker()).value();
    ClaimParams p;
    p.worker = w;
    p.tasks = {"t"};
    p.limit = 2;
    claimed = (*store)->JobClaim(p).value();
    ASSERT_EQ(claimed.size(), 2u);
  }
  sqlite3* db = Raw();
  ASSERT_EQ(sqlite3_exec(
                db,
                "INSERT INTO attempts (job_id, attempt, worker_id, lease_token, "
                "claimed_at) SELECT id, attempt, worker_id, lease_token, started_at "
                "FROM jobs WHERE state = 'running'; "
                "ALTER TABLE jobs DROP COLUMN attempt_started_at; "
                "ALTER TABLE attempts DROP COLUMN stdout_tail; "
                "CREATE INDEX jobs_running_lease ON jobs (lease_expires_at) WHERE "
                "state = 'running'; "
                "DROP INDEX jobs_state; CREATE INDEX jobs_state ON jobs (state, id); "
                "DROP INDEX attempts_lost; CREATE INDEX attempts_outcome ON attempts "
                "(outcome) WHERE outcome <> 'succeeded'; "
                "ALTER TABLE workers DROP COLUMN allow_commands; "
                "ALTER TABLE leaders DROP COLUMN ttl_ms; "
                "DROP TABLE queue_pauses; DROP TABLE api_tokens; DROP TABLE audit_log; "
                "ALTER TABLE workers DROP COLUMN metrics; DROP TABLE metrics_retired; "
                "DROP TABLE bulk_ops; DROP INDEX fenced_writes_job; "
                "ALTER TABLE attempts DROP COLUMN lost_by; "
                "ALTER TABLE attempts DROP COLUMN runnable_at; "
                "DROP TABLE job_counts; DROP INDEX jobs_crash_loop; "
                "DROP INDEX jobs_due_group; "
                "DROP TABLE queue_limits; DROP TABLE queue_starts; "
                "ALTER TABLE workers DROP COLUMN host; DROP INDEX workers_node; DROP TABLE nodes; "
                "ALTER TABLE jobs DROP COLUMN avoid_node; "
                "ALTER TABLE jobs DROP COLUMN avoid_until; "
                "ALTER TABLE workers DROP COLUMN keepalive_ms; "
                "DROP TABLE job_actions; "
                "DELETE FROM warden_schema WHERE version > 1",
                nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);

  auto store = OpenStore(path_);
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  EXPECT_EQ((*store)->SchemaVersion().value(), sqlite::kSchemaVersion);
  db = Raw();
  EXPECT_EQ(IndexSql(db),
            "attempts_lost: CREATE INDEX attempts_lost ON attempts (job_id) WHERE outcome = "
            "'lost'; jobs_state: CREATE INDEX jobs_state ON jobs (state, id) WHERE state NOT IN "
            "('running', 'available')");
  sqlite3_close(db);
  JobFilter available;
  available.states = {JobState::kAvailable};
  EXPECT_EQ((*store)->JobList(available, nullptr).value().size(), 1u);

  JobOutcome ok;
  ok.ref = JobRef{claimed[0].id, claimed[0].lease_token};
  ok.success = true;
  JobOutcome failed;
  failed.ref = JobRef{claimed[1].id, claimed[1].lease_token};
  failed.error.kind = ErrorKind::kError;
  failed.error.message = "boom";
  const std::vector<JobOutcome> outcomes = {ok, failed};
  ASSERT_EQ((*store)->JobFinishMany(w, outcomes).value(), (std::vector<bool>{true, true}));
  auto succeeded = (*store)->JobGet(claimed[0].id).value();
  ASSERT_EQ(succeeded.attempts.size(), 1u);
  EXPECT_EQ(succeeded.attempts[0].outcome, "succeeded");
  EXPECT_EQ(succeeded.attempts[0].finished_at, succeeded.finished_at);
  auto retrying = (*store)->JobGet(claimed[1].id).value();
  ASSERT_EQ(retrying.attempts.size(), 1u);
  EXPECT_EQ(retrying.attempts[0].outcome, "error");
  ASSERT_TRUE(retrying.attempts[0].error.has_value());
  EXPECT_EQ(retrying.attempts[0].error->message, "boom");
}

// SQLite's memory statistics take a global mutex per allocation: the
// first open turns them off, unless the process used SQLite before (then
// SQLite refuses the change and they stay on). Each case runs in a fresh
// process (a re-executed test binary), whose SQLite is not yet initialized.
int64_t MemoryCounted() {
  sqlite3_int64 used = 0, highwater = 0;
  sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &used, &highwater, 0);
  return used;
}

TEST_F(SqliteFileTest, MemoryStatisticsAreOffAfterTheFirstOpenUnlessSqliteWasInUse) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto store = OpenStore(path_);
        std::exit(store.has_value() && MemoryCounted() == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        sqlite3_initialize();
        auto store = OpenStore(path_);
        std::exit(store.has_value() && MemoryCounted() > 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(SqliteFileTest, NotADatabaseIsDataLossAndUntouched) {
  { std::ofstream(path_) << "this is not a database, it is a grocery list\n"; }
  const auto before = std::filesystem::file_size(path_);
  auto store = OpenStore(path_);
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), StatusCode::kDataLoss);
  EXPECT_EQ(std::filesystem::file_size(path_), before);
}

// Payloads, results and stderr tails are no other local user's to read:
// a new file, its WAL and the workers' wake-up directory are private to
// their owner whatever the umask; an existing file keeps its mode.
TEST_F(SqliteFileTest, ANewDatabaseAndItsWakeDirectoryArePrivateToTheirOwner) {
  const mode_t old_umask = umask(022);
  {
    auto store = OpenStore(path_);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    auto session = (*store)->OpenSession(1, Millis(10'000));
    ASSERT_TRUE(session.has_value()) << session.error().ToString();
    namespace fs = std::filesystem;
    EXPECT_EQ(fs::status(path_).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    ASSERT_TRUE(fs::exists(path_ + "-wal"));
    EXPECT_EQ(fs::status(path_ + "-wal").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(fs::status(path_ + ".wake").permissions() & fs::perms::all, fs::perms::owner_all);
  }
  const std::string shared = dir_ + "/shared.db";
  { std::ofstream{shared}; }
  chmod(shared.c_str(), 0660);
  ASSERT_TRUE(OpenStore(shared).has_value());
  EXPECT_EQ(std::filesystem::status(shared).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                std::filesystem::perms::group_read | std::filesystem::perms::group_write);
  umask(old_umask);
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

// A durable commit is on disk when the call returns: the WAL is synced
// after its last write. The sync happens once the write lock is released,
// SQLite's and this process's: another writer can begin a transaction
// during it. A claim's commit is not synced (JobClaim says why), and a
// store opened with sync=normal syncs nothing.
TEST_F(SqliteFileTest, DurableCommitsAreSyncedAfterTheWriteLockIsReleased) {
  testing::WalWatch watch;
  auto store = OpenStore(path_);
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  auto other = sqlite::Db::Open(path_, /*busy_timeout_ms=*/0);
  ASSERT_TRUE(other.has_value());
  int syncs = 0, other_writer_got_in = 0;
  watch.on_sync = [&] {
    ++syncs;
    auto tx = sqlite::WriteTx::Begin(**other);  // rolled back at once
    if (tx.has_value()) ++other_writer_got_in;
  };
  // A string of W and S ends in S: nothing written after the last sync.
  auto synced_at_end = [](const std::string& events) {
    return events.find('W') != std::string::npos && events.back() == 'S';
  };

  auto worker = (*store)->WorkerRegister(testing::TestWorker());
  ASSERT_TRUE(worker.has_value()) << worker.error().ToString();

  watch.Clear();
  JobSpec spec;
  spec.task.push_back('t');
  ASSERT_TRUE((*store)->JobInsertMany(std::span(&spec, 1)).has_value());
  EXPECT_TRUE(synced_at_end(watch.events())) << "enqueue: " << watch.events();

  watch.Clear();
  ClaimParams p;
  p.worker = *worker;
  p.queues = {"default"};
  p.tasks = {"t"};
  p.limit = 1;
  p.default_lease = std::chrono::seconds(30);
  auto claimed = (*store)->JobClaim(p);
  ASSERT_TRUE(claimed.has_value() && claimed->size() == 1u);
  EXPECT_NE(watch.events().find('W'), std::string::npos);
  EXPECT_EQ(watch.events().find('S'), std::string::npos) << "claim: " << watch.events();

  watch.Clear();
  JobOutcome ok{JobRef{(*claimed)[0].id, (*claimed)[0].lease_token}, true, Json(), {}};
  auto finished = (*store)->JobFinishMany(*worker, std::span(&ok, 1));
  ASSERT_TRUE(finished.has_value() && (*finished)[0]);
  EXPECT_TRUE(synced_at_end(watch.events())) << "outcome: " << watch.events();

  // A statement that is its own transaction (no WriteTx) is synced too.
  watch.Clear();
  ASSERT_TRUE((*store)->WorkerSetDraining(*worker).ok());
  EXPECT_TRUE(synced_at_end(watch.events())) << "autocommit: " << watch.events();

  EXPECT_GE(syncs, 3);
  EXPECT_EQ(other_writer_got_in, syncs) << "a sync ran under the write lock";

  store->reset();
  auto relaxed = OpenStore("sqlite:" + path_ + "?sync=normal");
  ASSERT_TRUE(relaxed.has_value()) << relaxed.error().ToString();
  watch.Clear();
  ASSERT_TRUE((*relaxed)->JobInsertMany(std::span(&spec, 1)).has_value());
  EXPECT_NE(watch.events().find('W'), std::string::npos);
  EXPECT_EQ(watch.events().find('S'), std::string::npos) << "sync=normal: " << watch.events();
}

// Connections of one process to one file queue for the write lock on a
// shared mutex: a waiter gets it as soon as the holder commits, and gives
// up after its busy timeout like SQLite's own wait.
TEST_F(SqliteFileTest, WritersOfOneFileInOneProcessQueueAndGiveUpAfterTheBusyTimeout) {
  auto a = sqlite::Db::Open(path_, 5000);
  auto b = sqlite::Db::Open(path_, 200);
  ASSERT_TRUE(a.has_value() && b.has_value());
  ASSERT_TRUE((*a)->ExecScript("PRAGMA journal_mode=WAL; CREATE TABLE t (x)").ok());

  auto holder = sqlite::WriteTx::Begin(**a);
  ASSERT_TRUE(holder.has_value());
  const auto t0 = std::chrono::steady_clock::now();
  auto refused = sqlite::WriteTx::Begin(**b);
  const auto waited = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), StatusCode::kUnavailable);
  // Refused by the process's own lock, not by SQLite's busy wait (which
  // says "another process holds the database lock").
  EXPECT_NE(refused.error().message().find("another connection of this process"),
            std::string::npos)
      << refused.error().ToString();
  EXPECT_GE(waited, std::chrono::milliseconds(200));

  // A patient one waits for the holder's commit.
  auto c = sqlite::Db::Open(path_, 30'000);
  ASSERT_TRUE(c.has_value());
  auto waiter = std::async(std::launch::async, [&] {
    auto tx = sqlite::WriteTx::Begin(**c);
    if (!tx.has_value()) return tx.error();
    if (Status s = (*c)->ExecScript("INSERT INTO t VALUES (2)"); !s.ok()) return s;
    return (*tx)->Commit();
  });
  ASSERT_TRUE((*a)->ExecScript("INSERT INTO t VALUES (1)").ok());
  ASSERT_TRUE((*holder)->Commit().ok());
  const Status second = waiter.get();
  EXPECT_TRUE(second.ok()) << second.ToString();
  auto q = (*a)->Prepare("SELECT group_concat(x) FROM t");
  ASSERT_TRUE(q.has_value());
  auto row = q->Step();
  ASSERT_TRUE(row.has_value() && *row);
  EXPECT_EQ(q->Text(0), "1,2");
}

}  // namespace
}  // namespace warden
