// SqliteStore: jobs. Workers and maintenance are in sqlite_store_workers.cc.
#include "store/sqlite/sqlite_store.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <span>
#include <thread>
#include <unordered_set>

#include "core/claim_ahead.h"
#include "core/operator_rules.h"
#include "core/retry.h"
#include "env/system_clock.h"
#include "warden/text.h"
#include "store/sqlite/job_insert.h"
#include "store/sqlite/rows.h"
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

namespace {

std::string Placeholders(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += i ? ", ?" : "?";
  return s;
}

// The claimable jobs of `p` in `queue_count` queues (0: every queue), as
// seen at the first parameter (FROM jobs j WHERE ...). The SQL text depends
// only on the list sizes, so each worker reuses one prepared statement;
// every value is a parameter (BindClaimable).
std::string ClaimableWhere(const ClaimParams& p, size_t queue_count) {
  std::string sql =
      "state = 'available' AND (start_deadline_at IS NULL OR start_deadline_at >= ?)";
  if (queue_count > 0) sql += " AND queue IN (" + Placeholders(queue_count) + ")";
  sql += " AND (task IN (" + Placeholders(p.tasks.size()) + ")";
  sql += p.allow_commands ? " OR command <> '')" : ") AND command = ''";
  sql +=
      " AND (concurrency_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs r WHERE "
      "r.state = 'running' AND r.concurrency_key = j.concurrency_key))";
  return sql;
}

// Binds ClaimableWhere's parameters from position `i`; returns the next.
int BindClaimable(Stmt& s, int i, const ClaimParams& p, std::span<const std::string> queues,
                  TimeMs now) {
  s.Bind(i++, now);
  for (const auto& q : queues) s.Bind(i++, q);
  for (const auto& t : p.tasks) s.Bind(i++, t);
  return i;
}

// "[1,2,3]": a list of ids as one parameter, for `IN (SELECT value FROM
// json_each(?))`, so that one prepared statement serves any batch size.
std::string JsonIdList(std::span<const JobId> ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "]";
}

// Places in a batch by job id, sorted by id: a batch's rows come back from
// SQLite in rowid order and are matched to their places here (a sorted
// vector, not a map with a heap node per job).
using IdPlaces = std::vector<std::pair<JobId, size_t>>;

std::optional<size_t> PlaceOf(const IdPlaces& places, JobId id) {
  auto it = std::lower_bound(places.begin(), places.end(), std::pair(id, size_t{0}));
  if (it == places.end() || it->first != id) return std::nullopt;
  return it->second;
}

// SQLite allows at most 500 arms in a compound SELECT; past this many
// queues a claim sorts their available jobs instead (see PickSql).
constexpr size_t kMaxMergedQueues = 64;

bool MergesQueues(const ClaimParams& p) {
  return p.queues.size() >= 2 && p.queues.size() <= kMaxMergedQueues;
}

}  // namespace

// What a claim decides on, and all it reads under the write lock: the rest
// of each job is read after the commit (SqliteStore::JobClaim).
const char* const kPickColumns =
    "id, lease_token, concurrency_key, delivery, crashes, max_crashes, retry, charged, "
    "max_attempts, priority, run_at";  // (a compound SELECT orders by its columns)

// Named, not left to the planner: with statistics (a user's ANALYZE, or
// `PRAGMA optimize`), SQLite chose to scan the whole table for the look
// before each claim, past every finished job: a worker ran 7x slower.
#define WARDEN_CLAIMABLE_FROM "FROM jobs j INDEXED BY jobs_claim WHERE "

std::string PickSql(const ClaimParams& p) {
  const std::string select =
      std::string("SELECT ") + kPickColumns + " " WARDEN_CLAIMABLE_FROM;
  const std::string order = " ORDER BY priority DESC, run_at, id";
  if (!MergesQueues(p)) return select + ClaimableWhere(p, p.queues.size()) + order;
  // One arm per queue: SQLite walks each queue's jobs_claim index in claim
  // order and merges the arms lazily (MERGE (UNION ALL)). `queue IN (a, b)`
  // cannot use that index's order, so it sorted every available job of
  // those queues on each claim (0.66 s a claim with 1M queued).
  std::string sql;
  for (size_t i = 0; i < p.queues.size(); ++i) {
    sql += (i ? " UNION ALL " : "") + select + ClaimableWhere(p, 1);
  }
  return sql + order;
}

std::string AnyClaimableSql(const ClaimParams& p) {
  // EXISTS stops at the first row: the IN form costs nothing here.
  return "SELECT EXISTS (SELECT 1 " WARDEN_CLAIMABLE_FROM + ClaimableWhere(p, p.queues.size()) +
         ")";
}

#undef WARDEN_CLAIMABLE_FROM

// jobs_state leaves running and available jobs out (see schema.cc):
// jobs_running_worker has the running ones, jobs_claim the available ones.
// SQLite uses a partial index only for a query that repeats its condition
// word for word, hence the literal state terms.
#define WARDEN_NOT_IN_CLAIM_PATH "state NOT IN ('running', 'available')"

namespace {

// The filter's states, each once, in JobState order.
std::vector<JobState> ListedStates(const JobFilter& f) {
  std::vector<JobState> states = f.states;
  std::sort(states.begin(), states.end());
  states.erase(std::unique(states.begin(), states.end()), states.end());
  return states;
}

// Parameters of a listing: ?1 the limit, ?2 the queue, ?3 the task, then
// one for each state of ListedStates that jobs_state holds, in that order.
constexpr int kListStateParam = 4;

// `FROM ... WHERE ...` of the jobs in `state` (or in any state, when
// `state` is null) that match the queue and task of `f`. `param`: the
// state's parameter, if it needs one (advanced).
std::string ListedFrom(const JobFilter& f, std::optional<JobState> state, int* param) {
  std::string sql;
  if (!state) {
    // No WHERE at all when nothing is filtered: SQLite then counts the
    // jobs without reading their rows.
    sql = " FROM jobs";
  } else if (*state == JobState::kRunning) {
    sql = " FROM jobs INDEXED BY jobs_running_worker WHERE state = 'running'";
  } else if (*state == JobState::kAvailable) {
    sql = " FROM jobs INDEXED BY jobs_claim WHERE state = 'available'";
  } else {
    sql = " FROM jobs WHERE state = ?" + std::to_string((*param)++) +
          " AND " WARDEN_NOT_IN_CLAIM_PATH;
  }
  const char* join = state ? " AND " : " WHERE ";
  if (!f.queue.empty()) {
    sql += std::string(join) + "queue = ?2";
    join = " AND ";
  }
  if (!f.task.empty()) sql += std::string(join) + "task = ?3";
  return sql;
}

}  // namespace

std::string JobListSql(const JobFilter& f, bool count) {
  const std::vector<JobState> states = ListedStates(f);
  // One arm per state, each read through its state's index in id order,
  // merged (a compound SELECT): `state IN (...)` could use no partial index.
  std::string list, total;
  int param = kListStateParam;
  if (states.empty()) {
    const std::string from = ListedFrom(f, std::nullopt, &param);
    list = std::string("SELECT ") + kJobColumns + from;
    total = "SELECT count(*)" + from;
  } else {
    for (JobState state : states) {
      const std::string from = ListedFrom(f, state, &param);
      list += (list.empty() ? "SELECT " : " UNION ALL SELECT ") + std::string(kJobColumns) + from;
      total += (total.empty() ? "SELECT " : " + ") + std::string("(SELECT count(*)") + from + ")";
    }
  }
  // The page first, then what a person wants beside each of its jobs (both
  // ORDER BYs keep SQLite from merging the two, which would look up the
  // extras of every job sorted, not only of those shown).
  std::string sql = "SELECT page.*, " + JobExtraColumns("page");
  if (count) sql += ", (" + total + ")";
  return sql + " FROM (" + list + " ORDER BY id DESC LIMIT ?1) page ORDER BY page.id DESC";
}

const char* const kJobCountsSql =
    "SELECT state, n FROM (SELECT state, count(*) AS n FROM jobs WHERE " WARDEN_NOT_IN_CLAIM_PATH
    " GROUP BY state UNION ALL SELECT 'available', count(*) FROM jobs INDEXED BY jobs_claim "
    "WHERE state = 'available' UNION ALL SELECT 'running', count(*) FROM jobs INDEXED BY "
    "jobs_running_worker WHERE state = 'running') WHERE n > 0 ORDER BY state";

const char* const kCountUnfinishedSql =
    "SELECT (SELECT count(*) FROM jobs WHERE state IN ('scheduled', 'retryable') AND "
    WARDEN_NOT_IN_CLAIM_PATH ") + (SELECT count(*) FROM jobs INDEXED BY jobs_claim WHERE "
    "state = 'available') + (SELECT count(*) FROM jobs INDEXED BY jobs_running_worker "
    "WHERE state = 'running')";

#undef WARDEN_NOT_IN_CLAIM_PATH

const char* const kClaimSql =
    "UPDATE jobs SET state = 'running', worker_id = ?1, lease_token = lease_token + 1, "
    "attempt = attempt + 1, active_lease_ms = coalesce(lease_ms, ?2), "
    "lease_expires_at = ?3 + coalesce(lease_ms, ?2), started_mark = 0, "
    "attempt_started_at = NULL, cancel_requested = 0, started_at = ?3 "
    "WHERE id IN (SELECT value FROM json_each(?4)) AND state = 'available'";

// The tokens are compared in C++: matching [id, token] pairs in SQL parsed
// each pair's JSON again, and cost twice this read (0.86 against 0.39 µs a
// job in Python, 512 jobs a statement).
const char* const kFencePlainSql =
    "SELECT id, lease_token FROM jobs WHERE id IN (SELECT value FROM json_each(?1)) "
    "AND state = 'running'";

const std::string kReadClaimedSql =
    std::string("SELECT ") + kJobColumns +
    " FROM jobs WHERE id IN (SELECT value FROM json_each(?1))";

const char* const kSucceedPlainSql =
    "UPDATE jobs SET state = 'succeeded', result = NULL, finished_at = ?1, "
    "lease_expires_at = NULL WHERE id IN (SELECT value FROM json_each(?2)) "
    "AND state = 'running'";

Result<bool> SqliteStore::AnyClaimableLocked(const ClaimParams& p, TimeMs now) {
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(AnyClaimableSql(p)));
  BindClaimable(q, 1, p, p.queues, now);
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
  const bool any = row && q.Int(0) != 0;
  q.Reset();
  return any;
}

Result<std::vector<SqliteStore::Picked>> SqliteStore::PickLocked(const ClaimParams& p,
                                                                  TimeMs now, int limit) {
  WARDEN_ASSIGN_OR_RETURN(Stmt pick, db_->Prepare(PickSql(p)));
  if (!MergesQueues(p)) {
    BindClaimable(pick, 1, p, p.queues, now);
  } else {
    int i = 1;
    for (const auto& q : p.queues) i = BindClaimable(pick, i, p, std::span(&q, 1), now);
  }

  std::vector<Picked> picked;
  std::unordered_set<std::string> keys;  // one job per concurrency key per batch
  // Once the free slots have theirs, jobs for the slots not free yet are
  // taken only if safe to claim ahead, from the next `ahead` rows at most.
  const int for_free_slots = limit - std::clamp(p.ahead, 0, limit);
  int looked_ahead = 0;
  while (static_cast<int>(picked.size()) < limit) {
    WARDEN_ASSIGN_OR_RETURN(bool row, pick.Step());
    if (!row) break;
    if (static_cast<int>(picked.size()) >= for_free_slots) {
      if (++looked_ahead > p.ahead) break;
      JobInfo job;
      job.delivery = ParseDelivery(pick.Text(3)).value_or(Delivery::kAtLeastOnce);
      job.crashes = static_cast<int>(pick.Int(4));
      job.max_crashes = static_cast<int>(pick.Int(5));
      job.retry = ParseRetryPolicy(pick.Text(6)).value_or(RetryPolicy::kDefault);
      job.charged = static_cast<int>(pick.Int(7));
      job.max_attempts = static_cast<int>(pick.Int(8));
      if (!SafeToClaimAhead(job)) continue;
    }
    if (std::string key = pick.Text(2); !key.empty() && !keys.insert(key).second) continue;
    picked.push_back(Picked{pick.Int(0), pick.Int(1)});
  }
  pick.Reset();
  return picked;
}

Result<bool> SqliteStore::ExistsLocked(const std::string& sql, int64_t arg) {
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("SELECT EXISTS (" + sql + ")"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Bind(1, arg).Step());
  const bool exists = row && q.Int(0) != 0;
  q.Reset();
  return exists;
}

// Both use the partial index jobs_due: one probe however many jobs wait.
Result<bool> SqliteStore::AnyDueLocked(TimeMs now) {
  return ExistsLocked("SELECT 1 FROM jobs INDEXED BY jobs_due WHERE state IN "
                      "('scheduled', 'retryable') AND run_at <= ?",
                      now);
}

Result<int> SqliteStore::PromoteDueLocked(TimeMs now) {
  WARDEN_ASSIGN_OR_RETURN(
      Stmt promote, db_->Prepare("UPDATE jobs INDEXED BY jobs_due SET state = 'available' "
                                 "WHERE state IN ('scheduled', 'retryable') AND run_at <= ?"));
  return promote.Bind(1, now).Exec();
}

Result<std::vector<JobInfo>> SqliteStore::JobClaim(const ClaimParams& p) {
  MutexLock lock(mu_);
  const TimeMs seen_at = clock_->NowMs();
  // Look before taking the write lock: an idle worker's poll then costs one
  // read, and a process frozen while polling holds no lock over the others.
  WARDEN_ASSIGN_OR_RETURN(bool due, AnyDueLocked(seen_at));
  if (!due) {
    WARDEN_ASSIGN_OR_RETURN(bool any, AnyClaimableLocked(p, seen_at));
    if (!any) return std::vector<JobInfo>{};
  }

  // The claim's commit is not fsynced. Every process that could act on the
  // claim runs on this machine (SQLite is one host's file), so a power loss
  // that drops it also ends them, and the job is simply available again;
  // an application crash loses nothing (the OS has the write). The next
  // fsynced commit of this file (an outcome, a start mark, a heartbeat,
  // any enqueue) makes the claim durable before anything that depends on
  // it: the WAL is written in order. One fsync fewer per job on the way to
  // its start.
  UnsyncedCommits unsynced(*db_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  // Read under the lock, so recorded times follow the commit order.
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      bool active, ExistsLocked("SELECT 1 FROM workers WHERE id = ? AND state = 'active'",
                                p.worker));
  if (!active) {
    return FailedPrecondition("worker " + std::to_string(p.worker) +
                              " is not active (declared dead, draining or stopped)");
  }
  if (due) {
    // Due scheduled and retryable jobs become available first, so a claim
    // never waits for the sweeper.
    WARDEN_RETURN_IF_ERROR(PromoteDueLocked(now).status());
  }
  WARDEN_ASSIGN_OR_RETURN(std::vector<Picked> picked, PickLocked(p, now, p.limit));
  if (picked.empty()) {
    WARDEN_RETURN_IF_ERROR(tx->Commit());  // the promotions, if any
    return std::vector<JobInfo>{};
  }
  // One statement for the batch: run per job, opening its cursors cost as
  // much again as the row's write (bench/row_update_cost.py).
  std::vector<JobId> ids;
  ids.reserve(picked.size());
  for (const Picked& job : picked) ids.push_back(job.id);
  const std::string id_list = JsonIdList(ids);
  WARDEN_ASSIGN_OR_RETURN(Stmt upd, db_->Prepare(kClaimSql));
  upd.Bind(1, p.worker).Bind(2, static_cast<int64_t>(p.default_lease.count())).Bind(3, now);
  WARDEN_ASSIGN_OR_RETURN(int changed, upd.Bind(4, id_list).Exec());
  if (changed != static_cast<int>(picked.size())) {
    return Internal("claimed jobs changed under the write lock (" + std::to_string(changed) +
                    " of " + std::to_string(picked.size()) + " still available)");
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return ReadClaimedLocked(p.worker, picked, id_list);
}

// The claimed jobs are read whole after the commit, so that the write lock,
// which the completions wait on, is held only for what the claim decides
// on and writes. (UPDATE ... RETURNING would read them under the lock, and
// SQLite runs RETURNING as a trigger with a statement journal: it tripled
// the cost of a claim.) A job changed since the commit (a process frozen
// here past its lease) is left out unless it is still this claim's: a
// job the worker holds but was not told of is handed back by the worker's
// heartbeats (core/lost_claims.h), like one whose claim's reply was lost.
Result<std::vector<JobInfo>> SqliteStore::ReadClaimedLocked(WorkerId worker,
                                                            std::span<const Picked> picked,
                                                            const std::string& id_list) {
  IdPlaces places;
  places.reserve(picked.size());
  for (size_t i = 0; i < picked.size(); ++i) places.emplace_back(picked[i].id, i);
  std::sort(places.begin(), places.end());
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(kReadClaimedSql));
  q.Bind(1, id_list);
  std::vector<std::optional<JobInfo>> in_claim_order(picked.size());
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    JobInfo job = JobFromRow(q);
    const std::optional<size_t> at = PlaceOf(places, job.id);
    if (!at || job.state != JobState::kRunning || job.worker != worker ||
        job.lease_token != picked[*at].lease_token + 1) {
      continue;
    }
    in_claim_order[*at] = std::move(job);
  }
  q.Reset();
  std::vector<JobInfo> claimed;
  claimed.reserve(picked.size());
  for (auto& job : in_claim_order) {
    if (job) claimed.push_back(std::move(*job));
  }
  return claimed;
}

Result<bool> SqliteStore::JobMarkStarted(JobRef ref) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE jobs SET started_mark = 1, attempt_started_at = ? "
                             "WHERE id = ? AND lease_token = ? AND state = 'running' AND "
                             "cancel_requested = 0"));
  WARDEN_ASSIGN_OR_RETURN(int changed,
                          upd.Bind(1, now).Bind(2, ref.id).Bind(3, ref.lease_token).Exec());
  if (changed == 0) return false;
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return true;
}

Status SqliteStore::LogFenced(const JobRef& ref, WorkerId worker, const char* what,
                              TimeMs now) {
  WARDEN_ASSIGN_OR_RETURN(
      Stmt ins, db_->Prepare("INSERT INTO fenced_writes (job_id, lease_token, worker_id, at, "
                             "what) VALUES (?, ?, ?, ?, ?)"));
  return ins.Bind(1, ref.id)
      .Bind(2, ref.lease_token)
      .Bind(3, worker)
      .Bind(4, now)
      .Bind(5, what)
      .Exec()
      .status();
}

Result<bool> SqliteStore::SucceedLocked(const JobOutcome& o, TimeMs now) {
  // Fenced by the UPDATE itself, and no RETURNING (see JobClaim: SQLite's
  // RETURNING is a trigger with a statement journal, and costs more than
  // the rest of the completion). The job row keeps the succeeded attempt:
  // no `attempts` row (see schema.cc).
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE jobs SET state = 'succeeded', result = ?, finished_at = ?, "
                             "lease_expires_at = NULL WHERE id = ? AND lease_token = ? AND "
                             "state = 'running'"));
  if (o.result.is_null()) {
    upd.BindNull(1);
  } else {
    upd.Bind(1, JsonText(o.result));
  }
  WARDEN_ASSIGN_OR_RETURN(
      int changed, upd.Bind(2, now).Bind(3, o.ref.id).Bind(4, o.ref.lease_token).Exec());
  if (changed != 1) return false;
  if (o.note.empty()) return true;
  // A success with a note is the one success that gets an `attempts` row:
  // the note is kept in its stderr_tail, as a failure's are.
  WARDEN_ASSIGN_OR_RETURN(
      Stmt att,
      db_->Prepare("INSERT INTO attempts (job_id, attempt, worker_id, lease_token, claimed_at, "
                   "started_at, outcome, finished_at, stderr_tail) "
                   "SELECT id, attempt, worker_id, lease_token, coalesce(started_at, ?1), "
                   "attempt_started_at, 'succeeded', ?1, ?2 FROM jobs WHERE id = ?3 "
                   "ON CONFLICT (job_id, attempt) DO UPDATE SET outcome = 'succeeded', "
                   "finished_at = ?1, stderr_tail = ?2"));
  WARDEN_RETURN_IF_ERROR(att.Bind(1, now).Bind(2, o.note).Bind(3, o.ref.id).Exec().status());
  return true;
}

Result<bool> SqliteStore::FailLocked(WorkerId worker, const JobOutcome& o, TimeMs now) {
  (void)worker;
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT delivery, started_mark, retry, charged, max_attempts, "
                           "crashes, max_crashes, attempt, cancel_requested, worker_id, "
                           "started_at, attempt_started_at FROM jobs "
                           "WHERE id = ? AND lease_token = ? AND state = 'running'"));
  q.Bind(1, o.ref.id).Bind(2, o.ref.lease_token);
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return false;
  FailureInput in;
  in.kind = o.error.kind;
  in.delivery = ParseDelivery(q.Text(0)).value_or(Delivery::kAtLeastOnce);
  in.started_mark = q.Int(1) != 0;
  in.retry = ParseRetryPolicy(q.Text(2)).value_or(RetryPolicy::kDefault);
  in.charged = static_cast<int>(q.Int(3));
  in.max_attempts = static_cast<int>(q.Int(4));
  in.crashes = static_cast<int>(q.Int(5));
  in.max_crashes = static_cast<int>(q.Int(6));
  const int64_t attempt = q.Int(7);
  // An operator's cancel wins over however the attempt ended (a job whose
  // worker died before it could stop it must not be retried).
  if (q.Int(8) != 0) in.kind = ErrorKind::kCancelled;
  const int64_t claimed_by = q.Int(9);
  const int64_t claimed_at = q.OptInt(10).value_or(now);
  const std::optional<int64_t> attempt_started_at = q.OptInt(11);
  q.Reset();

  const FailureDecision d = DecideFailure(in, Jitter());
  const bool terminal = IsTerminal(d.next);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd,
      // A retry without backoff keeps its place in line (its old run_at), so
      // a rescued job runs next instead of behind the whole backlog.
      db_->Prepare("UPDATE jobs SET state = ?1, run_at = CASE WHEN ?2 > 0 THEN ?3 + ?2 ELSE "
                   "run_at END, charged = charged + ?4, "
                   "crashes = crashes + ?5, last_error = ?6, finished_at = ?7, "
                   "lease_expires_at = NULL, cancel_requested = 0 "
                   "WHERE id = ?8 AND lease_token = ?9 AND state = 'running'"));
  upd.Bind(1, JobStateName(d.next))
      .Bind(2, static_cast<int64_t>(d.delay.count()))
      .Bind(3, now)
      .Bind(4, d.charge ? 1 : 0)
      .Bind(5, d.count_crash ? 1 : 0)
      .Bind(6, ErrorKindName(d.kind))
      .Bind(7, terminal ? std::optional<int64_t>(now) : std::nullopt)
      .Bind(8, o.ref.id)
      .Bind(9, o.ref.lease_token);
  WARDEN_RETURN_IF_ERROR(upd.Exec().status());

  // The attempt keeps what really happened; the job keeps the verdict
  // (e.g. this attempt `crash`, the job `crash_loop`). An attempt claimed
  // before schema 3 has its row already, written at its claim.
  WARDEN_ASSIGN_OR_RETURN(
      Stmt att,
      db_->Prepare("INSERT INTO attempts (job_id, attempt, worker_id, lease_token, claimed_at, "
                   "started_at, outcome, finished_at, error_message, exit_code, signal, "
                   "stderr_tail, stdout_tail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                   "?11, ?12, ?13) "
                   "ON CONFLICT (job_id, attempt) DO UPDATE SET outcome = ?7, finished_at = ?8, "
                   "error_message = ?9, exit_code = ?10, signal = ?11, stderr_tail = ?12, "
                   "stdout_tail = ?13, "
                   "started_at = coalesce(attempts.started_at, ?6)"));
  att.Bind(1, o.ref.id)
      .Bind(2, attempt)
      .Bind(3, claimed_by)
      .Bind(4, o.ref.lease_token)
      .Bind(5, claimed_at)
      .Bind(6, attempt_started_at)
      .Bind(7, ErrorKindName(o.error.kind))
      .Bind(8, now)
      .Bind(9, o.error.message)
      .Bind(10, o.error.exit_code ? std::optional<int64_t>(*o.error.exit_code) : std::nullopt)
      .Bind(11, o.error.signal ? std::optional<int64_t>(*o.error.signal) : std::nullopt)
      .BindTextOrNull(12, o.error.stderr_tail)
      .BindTextOrNull(13, o.error.stdout_tail);
  WARDEN_RETURN_IF_ERROR(att.Exec().status());
  return true;
}

// Successes without a result are the bulk of a busy worker's outcomes, and
// all write the same values: one statement writes them (see JobClaim).
// Each is fenced first, by a read under the same write lock. `plain`: their
// places in `outcomes`, which is where `accepted` is set.
Status SqliteStore::SucceedPlainLocked(std::span<const JobOutcome> outcomes,
                                       const PlainSuccesses& plain, TimeMs now,
                                       std::vector<bool>* accepted) {
  if (plain.places.empty()) return Status::Ok();
  WARDEN_ASSIGN_OR_RETURN(Stmt fence, db_->Prepare(kFencePlainSql));
  fence.Bind(1, plain.ids);
  std::vector<JobId> live;
  live.reserve(plain.places.size());
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, fence.Step());
    if (!row) break;
    const JobId id = fence.Int(0);
    const std::optional<size_t> at = PlaceOf(plain.places, id);
    if (!at || outcomes[*at].ref.lease_token != fence.Int(1)) continue;
    (*accepted)[*at] = true;
    live.push_back(id);
  }
  fence.Reset();
  if (live.empty()) return Status::Ok();
  WARDEN_ASSIGN_OR_RETURN(Stmt upd, db_->Prepare(kSucceedPlainSql));
  const std::string some = live.size() < plain.places.size() ? JsonIdList(live) : "";
  upd.Bind(1, now).Bind(2, some.empty() ? plain.ids : some);
  WARDEN_ASSIGN_OR_RETURN(int changed, upd.Exec());
  if (changed != static_cast<int>(live.size())) {
    return Internal("completed jobs changed under the write lock");
  }
  return Status::Ok();
}

// Successes without a result, each job named once in the batch: a job named
// twice is written outcome by outcome, in order (the second is then
// fenced), like every outcome that is not a plain success. Found, and their
// parameters written, before the write lock is taken.
SqliteStore::PlainSuccesses SqliteStore::FindPlainSuccesses(
    std::span<const JobOutcome> outcomes) {
  IdPlaces all;
  all.reserve(outcomes.size());
  for (size_t i = 0; i < outcomes.size(); ++i) all.emplace_back(outcomes[i].ref.id, i);
  std::sort(all.begin(), all.end());
  PlainSuccesses plain;
  std::vector<JobId> ids;
  for (size_t k = 0; k < all.size(); ++k) {
    const auto [id, at] = all[k];
    const bool named_once = (k == 0 || all[k - 1].first != id) &&
                            (k + 1 == all.size() || all[k + 1].first != id);
    const JobOutcome& o = outcomes[at];
    if (!named_once || !o.success || !o.result.is_null() || !o.note.empty()) continue;
    plain.places.emplace_back(id, at);  // still sorted by id
    ids.push_back(id);
  }
  plain.ids = JsonIdList(ids);
  return plain;
}

Result<std::vector<bool>> SqliteStore::JobFinishMany(WorkerId worker,
                                                     std::span<const JobOutcome> outcomes) {
  const PlainSuccesses plain = FindPlainSuccesses(outcomes);
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  std::vector<bool> accepted(outcomes.size(), false);
  WARDEN_RETURN_IF_ERROR(SucceedPlainLocked(outcomes, plain, now, &accepted));
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const JobOutcome& o = outcomes[i];
    if (PlaceOf(plain.places, o.ref.id) != i) {
      WARDEN_ASSIGN_OR_RETURN(accepted[i], o.success ? SucceedLocked(o, now)
                                                     : FailLocked(worker, o, now));
    }
    if (!accepted[i]) {
      WARDEN_RETURN_IF_ERROR(
          LogFenced(o.ref, worker, o.success ? "complete" : ErrorKindName(o.error.kind), now));
    }
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return accepted;
}

Result<bool> SqliteStore::JobCheckpoint(JobRef ref, const Json& checkpoint) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE jobs SET checkpoint = ? WHERE id = ? AND lease_token = ? "
                             "AND state = 'running'"));
  WARDEN_ASSIGN_OR_RETURN(
      int n, upd.Bind(1, JsonText(checkpoint)).Bind(2, ref.id).Bind(3, ref.lease_token).Exec());
  return n == 1;
}

// `started_at`: the job row's attempt_started_at.
Result<std::vector<AttemptInfo>> SqliteStore::AttemptsLocked(const JobInfo& job,
                                                              std::optional<TimeMs> started_at) {
  const JobId id = job.id;
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT a.attempt, a.worker_id, a.lease_token, a.claimed_at, "
                           "a.started_at, a.finished_at, a.outcome, a.error_message, "
                           "a.exit_code, a.signal, a.stderr_tail, w.name, a.stdout_tail "
                           "FROM attempts a LEFT JOIN workers w ON w.id = a.worker_id "
                           "WHERE a.job_id = ? ORDER BY a.attempt"));
  q.Bind(1, id);
  std::vector<AttemptInfo> out;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(AttemptFromColumns(q));
  }
  q.Reset();
  // The attempt in progress, or the one that succeeded, is in the job row.
  if (job.attempt == 0 || !job.worker || !job.started_at) return out;
  if (job.state != JobState::kRunning && job.state != JobState::kSucceeded) return out;
  const bool succeeded = job.state == JobState::kSucceeded;
  auto last = std::find_if(out.begin(), out.end(),
                           [&](const AttemptInfo& a) { return a.attempt == job.attempt; });
  if (last == out.end()) {
    AttemptInfo a;
    a.attempt = job.attempt;
    a.worker = *job.worker;
    a.worker_name = job.worker_name;
    a.lease_token = job.lease_token;
    a.claimed_at = *job.started_at;
    a.started_at = started_at;
    a.outcome = succeeded ? "succeeded" : "running";
    if (succeeded) a.finished_at = job.finished_at;
    out.push_back(std::move(a));
  } else if (last->outcome == "running") {
    // Claimed before schema 3, which wrote its row then: what happened
    // since is in the job row.
    if (!last->started_at) last->started_at = started_at;
    if (succeeded) {
      last->outcome = "succeeded";
      last->finished_at = job.finished_at;
    }
  }
  return out;
}

Result<JobInfo> SqliteStore::JobGet(JobId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare(std::string("SELECT ") + kJobColumns + ", attempt_started_at, " +
                           JobExtraColumns("jobs") + " FROM jobs WHERE id = ?"));
  q.Bind(1, id);
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return NotFound("no job with id " + std::to_string(id));
  JobInfo job = JobFromRow(q);
  const std::optional<TimeMs> attempt_started_at = q.OptInt(kJobColumnCount);
  JobExtrasFromRow(q, kJobColumnCount + 1, &job);
  q.Reset();
  WARDEN_ASSIGN_OR_RETURN(job.attempts, AttemptsLocked(job, attempt_started_at));
  return job;
}

Result<std::vector<JobInfo>> SqliteStore::JobList(const JobFilter& f, int64_t* total) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(JobListSql(f, total != nullptr)));
  q.Bind(1, f.limit);
  if (!f.queue.empty()) q.Bind(2, f.queue);
  if (!f.task.empty()) q.Bind(3, f.task);
  int param = kListStateParam;
  for (JobState state : ListedStates(f)) {
    if (state != JobState::kRunning && state != JobState::kAvailable) {
      q.Bind(param++, JobStateName(state));
    }
  }
  std::vector<JobInfo> out;
  if (total) *total = 0;  // no row: nothing matches (the limit is at least 1)
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(JobFromRow(q));
    JobExtrasFromRow(q, kJobColumnCount, &out.back());
    if (total) *total = q.Int(kJobColumnCount + kJobExtraColumnCount);
  }
  return out;
}

Status SqliteStore::JobRetry(JobId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("SELECT state FROM jobs WHERE id = ?"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
  if (!row) return NotFound("no job with id " + std::to_string(id));
  const JobState state = ParseJobState(q.Text(0)).value_or(JobState::kDead);
  q.Reset();
  WARDEN_RETURN_IF_ERROR(CheckRetryAllowed(id, state));
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE jobs SET state = 'available', run_at = ?, charged = 0, "
                             "crashes = 0, finished_at = NULL, start_deadline_at = NULL "
                             "WHERE id = ?"));
  Status s = upd.Bind(1, now).Bind(2, id).Exec().status();
  if (s.code() == StatusCode::kFailedPrecondition) {
    return FailedPrecondition("job " + std::to_string(id) +
                              ": another live job holds its unique key");
  }
  WARDEN_RETURN_IF_ERROR(s);
  return tx->Commit();
}

Result<JobState> SqliteStore::JobCancel(JobId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("SELECT state FROM jobs WHERE id = ?"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
  if (!row) return NotFound("no job with id " + std::to_string(id));
  const JobState state = ParseJobState(q.Text(0)).value_or(JobState::kDead);
  q.Reset();
  WARDEN_RETURN_IF_ERROR(CheckCancelAllowed(id, state));
  if (state == JobState::kRunning) {
    WARDEN_ASSIGN_OR_RETURN(Stmt upd,
                            db_->Prepare("UPDATE jobs SET cancel_requested = 1 WHERE id = ?"));
    WARDEN_RETURN_IF_ERROR(upd.Bind(1, id).Exec().status());
  } else {
    WARDEN_ASSIGN_OR_RETURN(
        Stmt upd, db_->Prepare("UPDATE jobs SET state = 'cancelled', finished_at = ?, "
                               "last_error = 'cancelled' WHERE id = ?"));
    WARDEN_RETURN_IF_ERROR(upd.Bind(1, now).Bind(2, id).Exec().status());
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return state == JobState::kRunning ? JobState::kRunning : JobState::kCancelled;
}

Result<int64_t> SqliteStore::JobCountUnfinished() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare(kCountUnfinishedSql));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
  const int64_t n = row ? q.Int(0) : 0;
  q.Reset();
  return n;
}

Result<std::optional<Millis>> SqliteStore::JobNextDueIn() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT run_at FROM jobs INDEXED BY jobs_due WHERE state IN "
                           "('scheduled', 'retryable') ORDER BY run_at LIMIT 1"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
  std::optional<Millis> due;
  if (row && !q.IsNull(0)) due = Millis(std::max<int64_t>(0, q.Int(0) - clock_->NowMs()));
  q.Reset();
  return due;
}

// One part per state, each in the terms of the partial index that holds it.
// ?1: a JSON array of queues, [] for every queue.
const char* const kBacklogSql =
    "SELECT queue, task, command <> '', 'available', count(*), min(run_at) FROM jobs WHERE "
    "state = 'available' AND (?1 = '[]' OR queue IN (SELECT value FROM json_each(?1))) GROUP "
    "BY 1, 2, 3 UNION ALL SELECT queue, task, command <> '', state, count(*), min(run_at) FROM "
    "jobs WHERE state IN ('scheduled', 'retryable') AND (?1 = '[]' OR queue IN (SELECT value "
    "FROM json_each(?1))) GROUP BY 1, 2, 3, 4 UNION ALL SELECT queue, task, command <> '', "
    "'running', count(*), min(run_at) FROM jobs WHERE state = 'running' AND worker_id IS NOT "
    "NULL AND (?1 = '[]' OR queue IN (SELECT value FROM json_each(?1))) GROUP BY 1, 2, 3";

Result<std::vector<BacklogGroup>> SqliteStore::JobBacklog(
    const std::vector<std::string>& queues) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(kBacklogSql));
  q.Bind(1, Json(queues).dump());
  std::vector<BacklogGroup> out;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    BacklogGroup g;
    g.queue = q.Text(0);
    g.task = q.Text(1);
    g.command = q.Int(2) != 0;
    g.state = ParseJobState(q.Text(3)).value_or(JobState::kAvailable);
    g.count = q.Int(4);
    g.next_run_at = q.Int(5);
    out.push_back(std::move(g));
  }
  q.Reset();
  return out;
}

}  // namespace warden::sqlite
