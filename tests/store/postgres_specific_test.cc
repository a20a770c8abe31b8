// PostgreSQL-only behaviour, where the capability differs from SQLite's:
// the server's clock (SQLite trusts its one host's clock), session locks
// that prove a worker's death across hosts (SQLite proves it from the
// process itself), lost connections (SQLite has none), SKIP LOCKED claims,
// concurrent migrations by several hosts, and enqueueing from SQL.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <atomic>
#include <thread>

#include "core/clock.h"
#include "maintenance/sweeper.h"
#include "pg_test_db.h"
#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_schema.h"
#include "store/postgres/pg_store.h"
#include "store/store.h"

namespace warden::testing {
namespace {

using std::chrono::seconds;

class PostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WARDEN_REQUIRE_PG();
    auto db = PgTestDb::Create();
    ASSERT_TRUE(db.has_value()) << db.error().ToString();
    db_ = std::move(db).value();
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }

  std::unique_ptr<Store> Open(StoreOptions o = {}) {
    auto s = OpenStore(db_->url(), o);
    EXPECT_TRUE(s.has_value()) << s.error().ToString();
    return s.has_value() ? std::move(s).value() : nullptr;
  }
  std::unique_ptr<pg::Conn> Sql() {
    auto c = pg::Conn::Connect(db_->url());
    EXPECT_TRUE(c.has_value()) << c.error().ToString();
    return c.has_value() ? std::move(c).value() : nullptr;
  }
  // Ends every other session on this test's database, as
  // pg_terminate_backend by an operator (or a crashed pooler) would.
  int TerminateOtherSessions(pg::Conn& admin) {
    auto r = admin.Exec(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
        "current_database() AND pid <> pg_backend_pid()");
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? static_cast<int>(r->Int(0, 0)) : 0;
  }
  WorkerId Register(Store& s, const std::string& name = "w") {
    WorkerRegistration r;
    r.name = name;
    r.node = "host-" + name;
    r.boot_id = "boot";
    r.pid = 1;
    r.version = "test";
    r.queues = {"default"};
    r.tasks = {"t"};
    auto id = s.WorkerRegister(r);
    EXPECT_TRUE(id.has_value()) << id.error().ToString();
    return id.has_value() ? *id : 0;
  }
  JobId Add(Store& s, JobSpec spec = {}) {
    if (spec.task.empty()) spec.task = "t";
    auto r = s.JobInsertMany(std::span<const JobSpec>(&spec, 1));
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? (*r)[0].id : 0;
  }
  std::vector<JobInfo> Claim(Store& s, WorkerId w, int limit = 10) {
    ClaimParams p;
    p.worker = w;
    p.queues = {"default"};
    p.tasks = {"t"};
    p.limit = limit;
    auto r = s.JobClaim(p);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : std::vector<JobInfo>{};
  }
  std::optional<bool> SessionLost(Store& s, WorkerId w) {
    auto live = s.WorkerListLive("");
    if (!live.has_value()) return std::nullopt;
    for (const auto& l : *live) {
      if (l.id == w) return l.session_lost;
    }
    return std::nullopt;
  }

  std::unique_ptr<PgTestDb> db_;
  std::unique_ptr<Store> store_;
};

// A clock `offset` away from the real one: a worker host whose clock is wrong.
class SkewedClock : public Clock {
 public:
  explicit SkewedClock(Millis offset) : offset_(offset) {}
  TimeMs NowMs() const override {
    return std::chrono::duration_cast<Millis>(
               std::chrono::system_clock::now().time_since_epoch())
               .count() +
           offset_.count();
  }
  int64_t MonotonicMs() const override { return 0; }

 private:
  Millis offset_;
};

TEST_F(PostgresTest, TheServerClockJudgesLeasesNotTheWorkerHosts) {
  SkewedClock ahead(std::chrono::hours(1)), behind(-std::chrono::hours(1));
  StoreOptions a, b;
  a.clock = &ahead;   // ignored by PostgreSQL, by design
  b.clock = &behind;
  auto worker_host = Open(a);
  auto sweeper_host = Open(b);
  const JobId id = Add(*worker_host);
  const WorkerId w = Register(*worker_host);
  auto jobs = Claim(*worker_host, w);
  ASSERT_EQ(jobs.size(), 1u);
  const TimeMs server_now = *store_->Now();
  ASSERT_TRUE(jobs[0].lease_expires_at.has_value());
  EXPECT_NEAR(static_cast<double>(*jobs[0].lease_expires_at - server_now), 10'000, 2'000)
      << "the 10 s lease runs from the server's now, not from a host 1 h ahead";
  // The sweeping host's clock, 2 h behind the worker's, plays no part
  // either: it sees the lease as the server wrote it.
  auto leases = sweeper_host->JobLeases().value();
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].ref.id, id);
  EXPECT_EQ(leases[0].expires_at, *jobs[0].lease_expires_at);
  EXPECT_EQ(leases[0].length, seconds(10));
}

TEST_F(PostgresTest, ALostSessionLockIsVisibleAndARestoredOneIsNot) {
  const WorkerId w = Register(*store_);
  EXPECT_EQ(SessionLost(*store_, w), false) << "no session yet: nothing to prove";
  auto session = store_->OpenSession(w, seconds(10));
  ASSERT_TRUE(session.has_value()) << session.error().ToString();
  EXPECT_EQ(SessionLost(*store_, w), false) << "the lock is held";

  // The connection is cut while the worker lives: the lock is gone until
  // the session reconnects, which its next Drain does.
  auto killer = Sql();
  ASSERT_GE(TerminateOtherSessions(*killer), 2);
  std::optional<bool> lost;
  for (int i = 0; i < 5 && !lost; ++i) lost = SessionLost(*store_, w);  // reconnects
  EXPECT_EQ(lost, true);
  bool restored = false;
  for (int i = 0; i < 100 && !restored; ++i) {
    (void)(*session)->Drain();
    restored = SessionLost(*store_, w) == false;
    if (!restored) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(restored) << "Drain reconnects and takes the lock again";

  session->reset();  // the process is gone: its connection closes
  std::optional<bool> gone;
  for (int i = 0; i < 100 && gone != true; ++i) {
    gone = SessionLost(*store_, w);
    if (gone != true) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(gone, true) << "a closed session is proof of death";
}

// The server's keepalive on a worker's session, in seconds, as the
// server-side socket shows it (`ss -o`: time left before the first probe of
// an idle connection); -1 if not found.
int KeepAliveSecondsLeft(int session_fd) {
  sockaddr_in local{}, peer{};
  socklen_t len = sizeof local;
  if (getsockname(session_fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) return -1;
  len = sizeof peer;
  if (getpeername(session_fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return -1;
  // The server's end: from the server's port to ours.
  const std::string cmd = "ss -tnoH state established '( sport = :" +
                          std::to_string(ntohs(peer.sin_port)) + " and dport = :" +
                          std::to_string(ntohs(local.sin_port)) + " )' 2>&1";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  const size_t at = out.find("timer:(keepalive,");
  if (at == std::string::npos) return -1;
  // "29sec,0)", "4.8sec,0)", "1min59sec,0)", "2min,0)", "950ms,0)"
  const char* p = out.c_str() + at + 17;
  double total = 0;
  while (*p != ',' && *p != '\0') {
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    if (end == p) return -1;
    p = end;
    const std::string unit(p, std::strcspn(p, "0123456789.,"));
    p += unit.size();
    if (unit == "min") {
      total += v * 60;
    } else if (unit == "sec") {
      total += v;
    } else if (unit != "ms") {
      return -1;
    }
  }
  return static_cast<int>(total);
}

// Right after a round trip the socket may still wait for an ACK (then ss
// shows the retransmit timer instead): ask until it is idle.
int IdleKeepAliveSecondsLeft(int session_fd) {
  for (int i = 0; i < 50; ++i) {
    const int left = KeepAliveSecondsLeft(session_fd);
    if (left >= 0) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

// A cut-off worker's session must outlive every job it may still be
// running: the server ends a silent session after its keepalive, and a
// lost session proves the worker dead. A job with a longer lease than the
// worker's raises it (and nothing lowers it again).
TEST_F(PostgresTest, SessionKeepAliveCoversTheLongestLeaseHeld) {
  const WorkerId w = Register(*store_);
  auto session = store_->OpenSession(w, seconds(10));
  ASSERT_TRUE(session.has_value()) << session.error().ToString();
  const int fd = (*session)->fd();
  ASSERT_GE(fd, 0);
  const int initial = IdleKeepAliveSecondsLeft(fd);
  ASSERT_GE(initial, 0) << "no keepalive timer on the server's socket (ss -o)";
  EXPECT_LE(initial, 10) << "sized from the worker's 10 s lease";

  ASSERT_TRUE((*session)->KeepAliveFor(seconds(120)).ok());
  EXPECT_GT(IdleKeepAliveSecondsLeft(fd), 100) << "raised for a job with a 120 s lease";
  ASSERT_TRUE((*session)->KeepAliveFor(seconds(20)).ok());
  EXPECT_GT(IdleKeepAliveSecondsLeft(fd), 100) << "never lowered";
}

TEST_F(PostgresTest, LostConnectionsFailTransientlyThenReconnect) {
  const JobId id = Add(*store_);
  auto killer = Sql();
  ASSERT_GE(TerminateOtherSessions(*killer), 1);
  auto first = store_->JobGet(id);
  if (!first.has_value()) {
    EXPECT_TRUE(first.error().transient()) << first.error().ToString();
  }
  Result<JobInfo> again = first;
  for (int i = 0; i < 50 && !again.has_value(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    again = store_->JobGet(id);
  }
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_EQ(again->id, id);
}

TEST_F(PostgresTest, ClaimsSkipRowsAnotherTransactionHolds) {
  const JobId held = Add(*store_);
  const JobId free = Add(*store_);
  auto other = Sql();
  ASSERT_TRUE(other->ExecScript("BEGIN").ok());
  ASSERT_TRUE(other->Exec("SELECT id FROM warden.jobs WHERE id = $1::bigint FOR UPDATE",
                          pg::Params().Add(held))
                  .has_value());
  const WorkerId w = Register(*store_);
  const auto start = std::chrono::steady_clock::now();
  auto jobs = Claim(*store_, w);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(2)) << "no waiting on the lock";
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, free);
  ASSERT_TRUE(other->ExecScript("ROLLBACK").ok());
  auto later = Claim(*store_, w);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].id, held);
}

// Rows of warden.jobs that the plan's scans produced, over all loops.
double JobRowsScanned(const Json& node) {
  double rows = 0;
  if (node.value("Relation Name", "") == "jobs") {
    rows += node.value("Actual Rows", 0.0) * node.value("Actual Loops", 0.0);
  }
  for (const Json& child : node.value("Plans", Json::array())) rows += JobRowsScanned(child);
  return rows;
}

// A claim reads about as many jobs as it takes, however long the backlog,
// for a worker of one queue or several. With several, `queue = ANY(...)`
// could not use the claim index's order: each claim read and sorted every
// available job of those queues.
TEST_F(PostgresTest, ClaimReadsAboutWhatItTakesFromOneQueueOrSeveral) {
  std::vector<JobSpec> specs(3000);
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i].task.push_back('t');
    specs[i].queue.assign(1, i % 2 ? 'a' : 'b');  // (not =: a false -Wrestrict in g++ 12)
  }
  ASSERT_TRUE(store_->JobInsertMany(specs).has_value());
  auto sql = Sql();
  ASSERT_TRUE(sql->ExecScript("ANALYZE warden.jobs").ok());
  for (const std::vector<std::string>& queues :
       {std::vector<std::string>{"a"}, {"a", "b"}, {"a", "b", "c"}}) {
    ClaimParams p;
    p.queues = queues;
    p.tasks = {"t"};
    p.limit = 5;
    pg::Params params;
    pg::AddPickParams(params, p, *store_->Now());
    auto plan = sql->Exec("EXPLAIN (ANALYZE, FORMAT JSON) " + pg::PickSql(p, "$1::bigint", ""),
                          params);
    ASSERT_TRUE(plan.has_value()) << plan.error().ToString();
    const Json root = Json::parse(plan->Text(0, 0))[0]["Plan"];
    EXPECT_LE(JobRowsScanned(root), 5.0 * static_cast<double>(queues.size()))
        << queues.size() << " queues: " << root.dump(1);
  }
}

// Statistics taken while no job ran (a backlog enqueued before the workers
// started, then analyzed) put the running jobs at about none, and the
// planner found reading every running job through jobs_running_worker,
// each compared with every id named, cheaper than looking the ids up. A
// completion or a heartbeat then compared every running job with every id:
// with 1M queued and 512 slots each took up to seconds, and a worker ran
// 700 jobs/s instead of 23,000. jobs_running_worker is now for the jobs
// of a worker named (or of every worker, said so), under custom and
// generic plans alike; the same trap waited in jobs_claim for a claim of
// picked jobs. (On a table this size a sequential scan is the planner's
// other fair choice; on a large one, the ids through jobs_pkey. At 3,000
// rows the planner hashed the batch's values; at 30,000 it chose, as on
// the benchmark's 50,000, the nested loop that compared every pair.)
TEST_F(PostgresTest, StatementsNamingJobsReadNoWholeStateIndexWhateverTheStatistics) {
  std::vector<JobSpec> specs(30000);
  for (JobSpec& s : specs) s.task.push_back('t');
  ASSERT_TRUE(store_->JobInsertMany(specs).has_value());
  auto sql = Sql();
  ASSERT_TRUE(sql->ExecScript("ANALYZE warden.jobs").ok());
  const WorkerId w = Register(*store_);
  std::vector<JobInfo> running;
  for (int i = 0; i < 4; ++i) {
    for (JobInfo& job : Claim(*store_, w, 250)) running.push_back(std::move(job));
  }
  ASSERT_EQ(running.size(), 1000u);
  std::vector<int64_t> ids, tokens;
  for (const JobInfo& job : running) {
    ids.push_back(job.id);
    tokens.push_back(job.lease_token);
  }
  // Every scan of jobs_running_worker must be for one worker.
  auto expect_running_read_by_worker = [](const std::string& plan) {
    for (size_t at = plan.find("jobs_running_worker"); at != std::string::npos;
         at = plan.find("jobs_running_worker", at + 1)) {
      const size_t line_end = plan.find('\n', at);
      const size_t next_end = plan.find('\n', line_end + 1);
      EXPECT_NE(plan.substr(line_end, next_end - line_end).find("Index Cond: (worker_id ="),
                std::string::npos)
          << plan;
    }
  };
  // The statement's plan as the server chooses it for a prepared statement
  // (the worker's connections prepare theirs) in `mode`, one line per step.
  // `args`: the EXECUTE's arguments, as SQL literals.
  auto plan = [&](const std::string& statement, const std::string& args, const char* mode) {
    EXPECT_TRUE(sql->ExecScript(std::string("SET plan_cache_mode = ") + mode +
                                "; PREPARE looked_at AS " + statement)
                    .ok());
    auto r = sql->Exec("EXPLAIN EXECUTE looked_at" + (args.empty() ? "" : "(" + args + ")"));
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_TRUE(sql->ExecScript("DEALLOCATE looked_at").ok());
    std::string text;
    for (int i = 0; r.has_value() && i < r->size(); ++i) text += r->Text(i, 0) + "\n";
    return text;
  };
  // (Built by appending: g++ 12 warns falsely, -Wrestrict, on `"'{" + ...`.)
  auto array = [](const std::vector<int64_t>& v) {
    std::string text(1, '\'');
    text.push_back('{');
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) text.push_back(',');
      text += std::to_string(v[i]);
    }
    text.push_back('}');
    text.push_back('\'');
    return text;
  };
  const std::string now = std::to_string(*store_->Now());
  const std::string no_results =
      "array_fill(NULL::text, ARRAY[" + std::to_string(ids.size()) + "])";
  for (const char* mode : {"force_custom_plan", "force_generic_plan"}) {
    SCOPED_TRACE(mode);
    const std::string succeed =
        array(ids) + ", " + array(tokens) + ", " + no_results + ", " + now + ", " + no_results;
    expect_running_read_by_worker(plan(pg::kSucceedManySql, succeed, mode));
    // Nor may a batch of completions the size a worker of 512 slots sends
    // compare each job with every id named (a nested loop over the batch's
    // values, which these statistics invited): 50 ms a batch instead of 1.
    const std::vector<int64_t> batch_ids(ids.begin(), ids.begin() + 512);
    const std::vector<int64_t> batch_tokens(tokens.begin(), tokens.begin() + 512);
    const std::string batch_results = "array_fill(NULL::text, ARRAY[512])";
    const std::string batch_plan =
        plan(pg::kSucceedManySql,
             array(batch_ids) + ", " + array(batch_tokens) + ", " + batch_results + ", " + now +
                 ", " + batch_results,
             mode);
    EXPECT_EQ(batch_plan.find("Join Filter: ((j.id = v.id)"), std::string::npos) << batch_plan;
    expect_running_read_by_worker(plan(pg::kHeartbeatSql, "NULL, " + std::to_string(w), mode));
    // A claim's look for a running job of the same concurrency key reads
    // jobs_running_ckey, never the table (the planner hashes it once per
    // claim under these statistics: 20 ms a claim on 50,000 jobs).
    {
      ClaimParams p;
      p.tasks = {"t"};
      p.limit = 5;
      pg::Params params;
      pg::AddPickParams(params, p, *store_->Now());
      ASSERT_TRUE(sql->ExecScript(std::string("SET plan_cache_mode = ") + mode).ok());
      auto pick = sql->Exec("EXPLAIN " + pg::PickSql(p, "$1::bigint", ""), params);
      ASSERT_TRUE(pick.has_value()) << pick.error().ToString();
      std::string text;
      for (int i = 0; i < pick->size(); ++i) text += pick->Text(i, 0) + "\n";
      EXPECT_EQ(text.find("Seq Scan on jobs r"), std::string::npos) << text;
      const std::string claim_plan =
          plan(pg::kClaimPickedSql, std::to_string(w) + ", 10000, NULL, " + array(ids), mode);
      EXPECT_EQ(claim_plan.find("Seq Scan on jobs r"), std::string::npos) << claim_plan;
    }
    // The sweep's look at the leases reads the running jobs, not the table.
    const std::string sweep = plan(pg::kJobLeasesSql, "", mode);
    EXPECT_NE(sweep.find("jobs_running_worker"), std::string::npos) << sweep;
  }

  // The same with statistics that say no job is available: a claim of
  // picked jobs must not read all of jobs_claim to find them.
  while (!Claim(*store_, w, 250).empty()) {
  }
  ASSERT_TRUE(sql->ExecScript("ANALYZE warden.jobs").ok());
  auto added = store_->JobInsertMany(specs);
  ASSERT_TRUE(added.has_value());
  std::vector<int64_t> picked;
  for (const EnqueueResult& e : *added) picked.push_back(e.id);
  for (const char* mode : {"force_custom_plan", "force_generic_plan"}) {
    SCOPED_TRACE(mode);
    const std::string claim_plan =
        plan(pg::kClaimPickedSql, std::to_string(w) + ", 10000, NULL, " + array(picked), mode);
    EXPECT_EQ(claim_plan.find("jobs_claim"), std::string::npos) << claim_plan;
  }
}

TEST_F(PostgresTest, AFrozenWorkersTransactionStallsNoMaintenance) {
  const JobId id = Add(*store_);
  const WorkerId w = Register(*store_);
  ASSERT_EQ(Claim(*store_, w).size(), 1u);
  // A worker frozen (SIGSTOP) mid-transaction keeps the locks it took: its
  // worker row (a claim holds it FOR SHARE) and a job row (a completion).
  auto frozen = Sql();
  ASSERT_TRUE(frozen->ExecScript("BEGIN").ok());
  ASSERT_TRUE(frozen->Exec("SELECT 1 FROM warden.workers WHERE id = $1::bigint FOR SHARE",
                           pg::Params().Add(w)).has_value());
  ASSERT_TRUE(frozen->Exec("SELECT 1 FROM warden.jobs WHERE id = $1::bigint FOR UPDATE",
                           pg::Params().Add(id)).has_value());

  // A sweeper an hour later: the lease and the heartbeat are long expired.
  FakeClock later(*store_->Now() + 3'600'000);
  StoreOptions o;
  o.database_clock = &later;
  auto sweeper = Open(o);
  const auto start = std::chrono::steady_clock::now();
  const auto leases = sweeper->JobLeases().value();
  const auto live = sweeper->WorkerListLive("").value();
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(sweeper->JobRescueSilent(leases).value().rescued, 0) << "the held row is skipped";
  auto declared = sweeper->WorkerDeclareDead(w, "test", LossCause::kProvenDeath, nullptr);
  ASSERT_FALSE(declared.has_value());
  EXPECT_TRUE(declared.error().transient()) << declared.error().ToString();
  EXPECT_EQ(sweeper->WorkerMarkSilent(live, seconds(10)).value(), 0)
      << "the held row is skipped";
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(2))
      << "no maintenance step waits for the frozen transaction";

  // The server ends the idle transaction (1 s); then the job is recovered.
  // (Any statement would reset its idle timer: look only once, after it.)
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  EXPECT_FALSE(frozen->Exec("SELECT 1").has_value())
      << "idle_in_transaction_session_timeout ends a frozen transaction";
  EXPECT_EQ(sweeper->JobRescueSilent(leases).value().rescued, 1);
  EXPECT_EQ(sweeper->WorkerMarkSilent(live, seconds(10)).value(), 1);
}

TEST_F(PostgresTest, APatientDeclarationWaitsOutAClaimInFlight) {
  const JobId id = Add(*store_);
  const WorkerId w = Register(*store_);
  ASSERT_EQ(Claim(*store_, w).size(), 1u);
  // A claim of that worker in flight holds its row FOR SHARE; it commits
  // 300 ms later. `workers release --force` on a busy worker meets this.
  auto claiming = Sql();
  ASSERT_TRUE(claiming->ExecScript("BEGIN").ok());
  ASSERT_TRUE(claiming->Exec("SELECT 1 FROM warden.workers WHERE id = $1::bigint FOR SHARE",
                             pg::Params().Add(w)).has_value());
  auto operator_store = Open(StoreOptions{});
  auto once = operator_store->WorkerDeclareDead(w, "released by an operator", LossCause::kOperator,
                                                nullptr);
  ASSERT_FALSE(once.has_value()) << "a single try gives up on the held row";
  EXPECT_TRUE(once.error().transient()) << once.error().ToString();
  std::thread commit([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(claiming->ExecScript("COMMIT").ok());
  });
  auto patient = DeclareDeadPatiently(*operator_store, DefaultEnv().clock(), w,
                                      "released by an operator", LossCause::kOperator, nullptr);
  commit.join();
  ASSERT_TRUE(patient.has_value()) << patient.error().ToString();
  EXPECT_EQ(patient->rescued, 1);
  const auto job = store_->JobGet(id).value();
  EXPECT_EQ(job.state, JobState::kRetryable);
  EXPECT_EQ(job.last_error, ErrorKind::kLost);
}

TEST_F(PostgresTest, HostsStartingAtOnceMigrateOnce) {
  auto fresh = PgTestDb::Create();
  ASSERT_TRUE(fresh.has_value());
  std::vector<std::thread> hosts;
  std::vector<Status> results(6);
  for (size_t i = 0; i < results.size(); ++i) {
    hosts.emplace_back([&, i] { results[i] = OpenStore((*fresh)->url()).status(); });
  }
  for (auto& t : hosts) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s.ToString();
  auto s = OpenStore((*fresh)->url());
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ((*s)->SchemaVersion().value(), pg::kSchemaVersion);
}

// Schema 14 adds flow control (queue_limits, queue_starts): a database of
// schema 13 with jobs gets the tables, and its queues can be limited.
TEST_F(PostgresTest, SchemaThirteenDatabaseGetsFlowControl) {
  for (int i = 0; i < 3; ++i) Add(*store_);
  auto sql = Sql();
  ASSERT_TRUE(sql->ExecScript("DROP TABLE warden.queue_limits; DROP TABLE warden.queue_starts; "
                              "DELETE FROM warden.schema_version WHERE version > 13")
                  .ok());
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion().value(), pg::kSchemaVersion);
  QueueLimits one;
  one.concurrency = 1;
  ASSERT_TRUE(store->QueueSetLimits("default", one, {}).value());
  ClaimParams p;
  p.worker = Register(*store);
  p.queues = {"default"};
  p.tasks = {"t"};
  p.limit = 3;
  EXPECT_EQ(store->JobClaim(p).value().size(), 1u) << "the limit holds on the old jobs";
}

// Migration 4 narrows jobs_state and drops jobs_running_lease; migration 5
// has jobs_running_worker serve only statements that say whose jobs. A
// version-3 database (made here by undoing both) gets them on open and
// keeps its jobs.
// Schema 11 keeps the jobs by queue and state (job_counts plus the deltas
// the triggers append): a database of schema 10 gets them counted from the
// jobs it holds, in the migration's transaction.
TEST_F(PostgresTest, SchemaTenDatabaseGetsItsJobCountsFromItsJobs) {
  std::vector<JobSpec> specs(5);
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i].task.push_back('t');
    specs[i].queue = i % 2 ? "odd" : "even";
  }
  ASSERT_TRUE(store_->JobInsertMany(specs).has_value());
  auto sql = Sql();
  ASSERT_TRUE(sql->ExecScript("DROP TRIGGER jobs_count_insert ON warden.jobs; DROP TRIGGER "
                              "jobs_count_update ON warden.jobs; DROP TRIGGER jobs_count_delete "
                              "ON warden.jobs; DROP TRIGGER jobs_count_truncate ON warden.jobs; "
                              "DROP TABLE warden.job_counts; DROP TABLE warden.job_count_deltas; "
                              "DROP INDEX warden.jobs_crash_loop; DROP INDEX "
                              "warden.jobs_due_group; UPDATE warden.jobs SET state = "
                              "'dead' WHERE id = 1; "
                              "DELETE FROM warden.schema_version WHERE version > 10")
                  .ok());
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion().value(), pg::kSchemaVersion);
  EXPECT_TRUE(store->JobCountsVerify().value().empty());
  const std::vector<QueueInfo> queues = store->QueueList().value();
  ASSERT_EQ(queues.size(), 2u);
  EXPECT_EQ(queues[0].jobs,
            (std::vector<std::pair<std::string, int64_t>>{{"available", 2}, {"dead", 1}}));
  EXPECT_EQ(queues[1].jobs, (std::vector<std::pair<std::string, int64_t>>{{"available", 2}}));
  // By task and command too (schema 13): what JobBacklog reads.
  const std::vector<BacklogGroup> backlog = store->JobBacklog({}).value();
  ASSERT_EQ(backlog.size(), 2u);
  EXPECT_EQ(backlog[0].queue, "even");
  EXPECT_EQ(backlog[0].task, "t");
  EXPECT_EQ(backlog[0].count, 2);
  EXPECT_EQ(backlog[1].count, 2);
  // SQL from outside warden (an application's warden.add_job, an
  // operator's UPDATE or TRUNCATE) goes through the same triggers.
  ASSERT_TRUE(sql->ExecScript("SELECT warden.add_job('t'); UPDATE warden.jobs SET state = "
                              "'cancelled' WHERE id = 2")
                  .ok());
  EXPECT_TRUE(store->JobCountsVerify().value().empty());
  ASSERT_TRUE(sql->ExecScript("TRUNCATE warden.jobs").ok());
  EXPECT_TRUE(store->JobCountsVerify().value().empty());
  EXPECT_TRUE(store->QueueList().value().empty());
}

// Completions on many connections at once append their deltas without
// waiting for each other (no row they all update), and the counts add up.
TEST_F(PostgresTest, ConcurrentCompletionsAndFoldsKeepTheCountsExact) {
  std::vector<JobSpec> specs(400);
  for (JobSpec& s : specs) s.task.push_back('t');
  ASSERT_TRUE(store_->JobInsertMany(specs).has_value());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto store = Open();
      if (!store) return ++failures, void();
      const WorkerId w = Register(*store, "w" + std::to_string(t));
      for (int round = 0; round < 20; ++round) {
        ClaimParams p;
        p.worker = w;
        p.tasks = {"t"};
        p.limit = 5;
        auto jobs = store->JobClaim(p);
        if (!jobs.has_value()) return ++failures, void();
        std::vector<JobOutcome> outs;
        for (const JobInfo& j : *jobs) {
          outs.push_back(JobOutcome{JobRef{j.id, j.lease_token}, true, Json(), {}});
        }
        if (!store->JobFinishMany(w, outs).has_value()) return ++failures, void();
        if (round % 5 == 0 && !store->JobCountsFold().ok()) return ++failures, void();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(store_->JobCountsVerify().value().empty());
  ASSERT_TRUE(store_->JobCountsFold().ok());
  auto sql = Sql();
  EXPECT_EQ(sql->Exec("SELECT count(*) FROM warden.job_count_deltas")->Int(0, 0), 0);
  EXPECT_TRUE(store_->JobCountsVerify().value().empty());
  int64_t total = 0;
  const Stats stats = store_->GetStats().value();
  for (const auto& [state, n] : stats.jobs) total += n;
  EXPECT_EQ(total, 400);
}

// What a database older than schema 11 does not have: the kept counts
// (schema 11, by group since 13), their triggers, and jobs_due_group (13).
#define WARDEN_UNDO_JOB_COUNTS                                                                  \
  "DROP TRIGGER jobs_count_insert ON warden.jobs; DROP TRIGGER jobs_count_update ON "           \
  "warden.jobs; DROP TRIGGER jobs_count_delete ON warden.jobs; DROP TRIGGER "                  \
  "jobs_count_truncate ON warden.jobs; DROP TABLE warden.job_counts; DROP TABLE "              \
  "warden.job_count_deltas; DROP INDEX warden.jobs_crash_loop; DROP INDEX "                    \
  "warden.jobs_due_group; "

TEST_F(PostgresTest, VersionThreeDatabaseIsMigratedAndKeepsItsJobs) {
  JobSpec spec;
  spec.task.push_back('t');
  ASSERT_TRUE(store_->JobInsertMany(std::span(&spec, 1)).has_value());
  auto sql = Sql();
  ASSERT_TRUE(sql->ExecScript("DROP INDEX warden.jobs_state; CREATE INDEX jobs_state ON "
                              "warden.jobs (state, id); CREATE INDEX jobs_running_lease ON "
                              "warden.jobs (lease_expires_at) WHERE state = 'running'; DROP "
                              "INDEX warden.jobs_running_worker; CREATE INDEX "
                              "jobs_running_worker ON warden.jobs (worker_id) WHERE state = "
                              "'running'; " WARDEN_UNDO_JOB_COUNTS
                              "DELETE FROM warden.schema_version WHERE version > 3")
                  .ok());
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion().value(), pg::kSchemaVersion);
  auto indexes = sql->Exec(
      "SELECT string_agg(indexname || ': ' || indexdef, '; ' ORDER BY indexname) FROM "
      "pg_indexes WHERE schemaname = 'warden' AND indexname IN ('jobs_state', "
      "'jobs_running_lease', 'jobs_running_worker')");
  ASSERT_TRUE(indexes.has_value()) << indexes.error().ToString();
  EXPECT_EQ(indexes->Text(0, 0),
            "jobs_running_worker: CREATE INDEX jobs_running_worker ON warden.jobs USING btree "
            "(worker_id) WHERE ((state = 'running'::text) AND (worker_id IS NOT NULL)); "
            "jobs_state: CREATE INDEX jobs_state ON warden.jobs USING btree (state, id) WHERE "
            "(state <> ALL (ARRAY['running'::text, 'available'::text]))");
  EXPECT_EQ(store->JobCountUnfinished().value(), 1);
}

// jobs_due_group holds only scheduled and retryable jobs, as on SQLite:
// schema 13 made it whole, and every claim and completion wrote into it
// (bench/results/history.md). A database at 16 gets it partial.
TEST_F(PostgresTest, TheDueGroupIndexHoldsOnlyScheduledAndRetryableJobs) {
  auto sql = Sql();
  ASSERT_TRUE(sql->ExecScript("DROP INDEX warden.jobs_due_group; CREATE INDEX jobs_due_group ON "
                              "warden.jobs (queue, task, (command <> ''), state, run_at); "
                              "DELETE FROM warden.schema_version WHERE version > 16")
                  .ok());
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion().value(), pg::kSchemaVersion);
  auto def = sql->Exec(
      "SELECT indexdef FROM pg_indexes WHERE schemaname = 'warden' AND indexname = "
      "'jobs_due_group'");
  ASSERT_TRUE(def.has_value()) << def.error().ToString();
  ASSERT_EQ(def->size(), 1);
  EXPECT_NE(def->Text(0, 0).find("WHERE (state = ANY (ARRAY['scheduled'::text, "
                                 "'retryable'::text]))"),
            std::string::npos)
      << def->Text(0, 0);
}

// Schema 18 keeps each worker's keepalive threshold; a worker registered
// before it gets 10 s, the default every worker had.
TEST_F(PostgresTest, SchemaSeventeenWorkersGetTheDefaultKeepalive) {
  WorkerRegistration r;
  r.name = "old";
  r.node = "host-old";
  r.boot_id = "boot";
  r.pid = 1;
  r.version = "test";
  r.keepalive = Millis(2'000);
  ASSERT_TRUE(store_->WorkerRegister(r).has_value());
  auto sql = Sql();
  ASSERT_TRUE(sql->ExecScript("ALTER TABLE warden.workers DROP COLUMN keepalive_ms; "
                              "DELETE FROM warden.schema_version WHERE version > 17")
                  .ok());
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->SchemaVersion().value(), pg::kSchemaVersion);
  const auto workers = store->WorkerList(false).value();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].keepalive, Millis(10'000));
}

TEST_F(PostgresTest, NewerSchemaIsRefusedAndLeftAlone) {
  auto sql = Sql();
  ASSERT_TRUE(sql->ExecScript("INSERT INTO warden.schema_version (version) VALUES (99)").ok());
  auto again = OpenStore(db_->url());
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.error().message().find("upgrade warden"), std::string::npos);
  EXPECT_EQ(sql->Exec("SELECT max(version) FROM warden.schema_version")->Int(0, 0), 99);
}

TEST_F(PostgresTest, AddJobFromSqlIsPartOfTheCallersTransaction) {
  auto app = Sql();
  ASSERT_TRUE(app->ExecScript("BEGIN").ok());
  ASSERT_TRUE(app->Exec("SELECT warden.add_job('t', '{\"order\": 1}')").has_value());
  ASSERT_TRUE(app->ExecScript("ROLLBACK").ok());
  EXPECT_EQ(store_->JobCountUnfinished().value(), 0) << "rolled back with the transaction";

  ASSERT_TRUE(app->ExecScript("BEGIN").ok());
  auto id = app->Exec("SELECT warden.add_job('t', '{\"order\": 2}', priority => 5, "
                      "unique_key => 'order-2')");
  ASSERT_TRUE(id.has_value()) << id.error().ToString();
  ASSERT_TRUE(app->ExecScript("COMMIT").ok());
  auto job = store_->JobGet(id->Int(0, 0));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->state, JobState::kAvailable);
  EXPECT_EQ(job->payload, Json::parse(R"({"order": 2})"));
  EXPECT_EQ(job->priority, 5);

  auto dup = app->Exec("SELECT warden.add_job('t', '{}', unique_key => 'order-2')");
  ASSERT_TRUE(dup.has_value());
  EXPECT_EQ(dup->Int(0, 0), id->Int(0, 0)) << "a live unique key returns the existing job";

  // An empty key is no key, as in Client::Enqueue: neither deduplicates
  // nor serialises.
  auto keyless1 = app->Exec("SELECT warden.add_job('t', unique_key => '', concurrency_key => '')");
  auto keyless2 = app->Exec("SELECT warden.add_job('t', unique_key => '', concurrency_key => '')");
  ASSERT_TRUE(keyless1.has_value() && keyless2.has_value());
  EXPECT_NE(keyless1->Int(0, 0), keyless2->Int(0, 0)) << "'' is not a unique key";
  auto nulls = app->Exec("SELECT count(*) FROM warden.jobs WHERE id IN ($1::bigint, $2::bigint) "
                         "AND unique_key IS NULL AND concurrency_key IS NULL",
                         pg::Params().Add(keyless1->Int(0, 0)).Add(keyless2->Int(0, 0)));
  ASSERT_TRUE(nulls.has_value());
  EXPECT_EQ(nulls->Int(0, 0), 2);
  ASSERT_TRUE(app->Exec("DELETE FROM warden.jobs WHERE id IN ($1::bigint, $2::bigint)",
                        pg::Params().Add(keyless1->Int(0, 0)).Add(keyless2->Int(0, 0)))
                  .has_value());

  auto later = app->Exec("SELECT warden.add_job('t', run_at => now() + interval '1 hour')");
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(store_->JobGet(later->Int(0, 0))->state, JobState::kScheduled);

  const WorkerId w = Register(*store_);
  auto claimed = Claim(*store_, w);
  ASSERT_EQ(claimed.size(), 1u) << "a job added from SQL is claimed like any other";
  EXPECT_EQ(claimed[0].id, id->Int(0, 0));
}

TEST_F(PostgresTest, AddJobFromSqlRejectsBadInputClearly) {
  auto app = Sql();
  auto empty = app->Exec("SELECT warden.add_job('')");
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.error().message().find("task must not be empty"), std::string::npos);
  auto bad_json = app->Exec("SELECT warden.add_job('t', $1::json)", pg::Params().Add("{oops"));
  ASSERT_FALSE(bad_json.has_value());
  EXPECT_EQ(bad_json.error().code(), StatusCode::kInvalidArgument);
  auto bad_delivery = app->Exec("SELECT warden.add_job('t', delivery => 'twice')");
  ASSERT_FALSE(bad_delivery.has_value());
  EXPECT_NE(bad_delivery.error().message().find("at_least_once"), std::string::npos)
      << bad_delivery.error().ToString();
  EXPECT_EQ(store_->JobCountUnfinished().value(), 0) << "nothing half-added";
}

// The name rules of ValidateSpec hold for jobs added from SQL: such a job
// was stored, and no `warden worker` could ever name it.
TEST_F(PostgresTest, AddJobFromSqlKeepsTheNameRules) {
  auto app = Sql();
  const std::string e_acute = "\xc3\xa9";  // 2 bytes, 1 character
  std::string long_task;
  for (int i = 0; i < 101; ++i) long_task += e_acute;  // 101 characters, 202 bytes
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"SELECT warden.add_job('t', queue => 'a,b')", "queue must not contain ','"},
      {"SELECT warden.add_job('resize=fast')", "task must not contain '='"},
      {"SELECT warden.add_job('t', queue => '')", "queue must not be empty"},
      {"SELECT warden.add_job(E't\\x01')", "must not contain control characters"},
      {"SELECT warden.add_job('t', unique_key => E'k\\n')", "must not contain control"},
      {"SELECT warden.add_job('" + long_task + "')", "at most 200 bytes"},
      {"SELECT warden.add_job('t', concurrency_key => repeat('k', 201))", "at most 200 bytes"},
  };
  for (const auto& [sql, says] : refused) {
    auto r = app->Exec(sql);
    ASSERT_FALSE(r.has_value()) << sql;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << sql;
    EXPECT_NE(r.error().message().find(says), std::string::npos) << r.error().ToString();
  }
  EXPECT_EQ(store_->JobCountUnfinished().value(), 0);
  // What the rules allow still goes in: a key with ',' and '=', 200 bytes.
  auto ok = app->Exec("SELECT warden.add_job('t', unique_key => 'a,b=c', "
                      "concurrency_key => repeat('k', 200))");
  ASSERT_TRUE(ok.has_value()) << ok.error().ToString();

  // A database made before the rules (schema version 1) gets them on open.
  ASSERT_TRUE(app->ExecScript("DROP FUNCTION warden.add_job; " WARDEN_UNDO_JOB_COUNTS
                              "DELETE FROM warden.schema_version WHERE version > 1")
                  .ok());
  ASSERT_NE(Open(), nullptr);
  auto upgraded = app->Exec("SELECT warden.add_job('t', queue => 'a,b')");
  ASSERT_FALSE(upgraded.has_value());
  EXPECT_NE(upgraded.error().message().find("queue must not contain ','"), std::string::npos)
      << upgraded.error().ToString();
}

}  // namespace
}  // namespace warden::testing
