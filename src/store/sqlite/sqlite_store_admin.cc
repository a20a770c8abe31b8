// SqliteStore: reads and admin: attempts, get, list, retry, cancel, counts, next due, backlog.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/operator_rules.h"
#include "store/attempt_in_row.h"
#include "store/sqlite/rows.h"
#include "store/sqlite/sqlite_store.h"

namespace warden::sqlite {

// jobs_state leaves running and available jobs out (migrations/sqlite/0003_*):
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

// Parameters of a listing: ?1 the limit, ?2 the queue, ?3 the task, ?4 the
// unique key, ?5 the concurrency key, ?6/?7 the created range, ?8/?9 the
// finished range, ?10 the search text, ?11 the cursor (ids below), ?12 the
// high water (ids up to), ?13 the last error's kind, then one for each
// state of ListedStates that jobs_state holds, in that order. Only the conditions given are in the
// SQL, so each arm reads by its index in id order as before.
constexpr int kListStateParam = 14;

// `FROM ... WHERE ...` of the jobs in `state` (or in any state, when
// `state` is null) that match the other conditions of `f`; `cursor`: with
// the cursor's bound (the count leaves it out). `param`: the state's
// parameter, if it needs one (advanced).
std::string ListedFrom(const JobFilter& f, std::optional<JobState> state, bool cursor,
                       int* param) {
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
  auto add = [&](const std::string& condition) {
    sql += join + condition;
    join = " AND ";
  };
  if (!f.queue.empty()) add("queue = ?2");
  if (!f.task.empty()) add("task = ?3");
  if (!f.unique_key.empty()) add("unique_key = ?4");
  if (!f.concurrency_key.empty()) add("concurrency_key = ?5");
  if (f.created_after) add("created_at >= ?6");
  if (f.created_before) add("created_at < ?7");
  if (f.finished_after) add("finished_at >= ?8");
  if (f.finished_before) add("finished_at < ?9");
  if (!f.search.empty()) {
    add("(instr(payload, ?10) > 0 OR instr(coalesce(" + LastErrorMessageSql("jobs") +
        ", ''), ?10) > 0)");
  }
  if (cursor && f.before_id > 0) add("id < ?11");
  if (f.max_id > 0) add("id <= ?12");
  if (f.error_kind) add("last_error = ?13");
  if (f.rescued) {
    add("EXISTS (SELECT 1 FROM attempts a INDEXED BY attempts_lost WHERE a.job_id = jobs.id "
        "AND a.outcome = 'lost')");
  }
  return sql;
}

// The listing's parts: the page's SELECT (without ORDER BY / LIMIT) and
// the count of every match (cursor aside).
void ListedParts(const JobFilter& f, const char* columns, std::string* list,
                 std::string* total) {
  const std::vector<JobState> states = ListedStates(f);
  // One arm per state, each read through its state's index in id order,
  // merged (a compound SELECT): `state IN (...)` could use no partial index.
  int param = kListStateParam, count_param = kListStateParam;
  if (states.empty()) {
    *list = std::string("SELECT ") + columns + ListedFrom(f, std::nullopt, true, &param);
    *total = "SELECT count(*)" + ListedFrom(f, std::nullopt, false, &count_param);
  } else {
    for (JobState state : states) {
      *list += (list->empty() ? "SELECT " : " UNION ALL SELECT ") + std::string(columns) +
               ListedFrom(f, state, true, &param);
      *total += (total->empty() ? "SELECT " : " + ") + std::string("(SELECT count(*)") +
                ListedFrom(f, state, false, &count_param) + ")";
    }
  }
}

}  // namespace

std::string JobListSql(const JobFilter& f, bool count) {
  std::string list, total;
  ListedParts(f, kJobColumns, &list, &total);
  // The page first, then what a person wants beside each of its jobs (both
  // ORDER BYs keep SQLite from merging the two, which would look up the
  // extras of every job sorted, not only of those shown).
  std::string sql = "SELECT page.*, " + JobExtraColumns("page");
  if (count) sql += ", (" + total + ")";
  return sql + " FROM (" + list + " ORDER BY id DESC LIMIT ?1) page ORDER BY page.id DESC";
}

std::string JobCountSql(const JobFilter& f) {
  std::string list, total;
  ListedParts(f, "id", &list, &total);
  return total;
}

std::string JobScanIdsSql(const JobFilter& f) {
  JobFilter rest = f;
  rest.states.clear();
  int param = kListStateParam;
  const std::string from = ListedFrom(rest, std::nullopt, true, &param);
  const std::string bare = " FROM jobs";
  std::string sql = "SELECT id FROM jobs NOT INDEXED" + from.substr(bare.size());
  if (!f.states.empty()) {
    std::string states;
    for (JobState s : ListedStates(f)) {
      states += std::string(states.empty() ? "'" : ", '") + JobStateName(s) + "'";
    }
    sql += std::string(from.size() > bare.size() ? " AND " : " WHERE ") + "state IN (" + states +
           ")";
  }
  return sql + " ORDER BY id DESC LIMIT ?1";
}

void BindListing(Stmt& q, const JobFilter& f, bool with_limit) {
  if (with_limit) q.Bind(1, f.limit);
  if (!f.queue.empty()) q.Bind(2, f.queue);
  if (!f.task.empty()) q.Bind(3, f.task);
  if (!f.unique_key.empty()) q.Bind(4, f.unique_key);
  if (!f.concurrency_key.empty()) q.Bind(5, f.concurrency_key);
  if (f.created_after) q.Bind(6, *f.created_after);
  if (f.created_before) q.Bind(7, *f.created_before);
  if (f.finished_after) q.Bind(8, *f.finished_after);
  if (f.finished_before) q.Bind(9, *f.finished_before);
  if (!f.search.empty()) q.Bind(10, f.search);
  if (f.before_id > 0) q.Bind(11, f.before_id);
  if (f.max_id > 0) q.Bind(12, f.max_id);
  if (f.error_kind) q.Bind(13, ErrorKindName(*f.error_kind));
  int param = kListStateParam;
  for (JobState state : ListedStates(f)) {
    if (state != JobState::kRunning && state != JobState::kAvailable) {
      q.Bind(param++, JobStateName(state));
    }
  }
}

#undef WARDEN_NOT_IN_CLAIM_PATH

// `started_at`: the job row's attempt_started_at.
Result<std::vector<AttemptInfo>> SqliteStore::AttemptsLocked(const JobInfo& job,
                                                              std::optional<TimeMs> started_at) {
  const JobId id = job.id;
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q,
      db_->Prepare(
          "SELECT a.attempt, a.worker_id, a.lease_token, a.claimed_at, "
          "a.started_at, a.finished_at, a.outcome, a.error_message, "
          "a.exit_code, a.signal, a.stderr_tail, w.name, a.stdout_tail, "
          "a.lost_by, a.runnable_at FROM attempts a LEFT JOIN workers w ON w.id = a.worker_id "
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
  AddAttemptInJobRow(job, started_at, &out);
  return out;
}

Result<std::vector<FencedWriteInfo>> SqliteStore::JobFencedWrites(JobId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT f.at, f.worker_id, w.name, f.lease_token, f.what FROM "
                           "fenced_writes f LEFT JOIN workers w ON w.id = f.worker_id "
                           "WHERE f.job_id = ? ORDER BY f.id"));
  q.Bind(1, id);
  std::vector<FencedWriteInfo> out;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(FencedWriteInfo{q.Int(0), q.Int(1), q.Text(2), q.Int(3), q.Text(4)});
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
  BindListing(q, f, true);
  std::vector<JobInfo> out;
  if (total) *total = 0;  // no row: nothing matches (the limit is at least 1)
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(JobFromRow(q));
    JobExtrasFromRow(q, kJobColumnCount, &out.back());
    if (total) *total = q.Int(kJobColumnCount + kJobExtraColumnCount);
  }
  q.Reset();
  if (total && out.empty() && f.before_id > 0) {
    // Past the last page: the count still counts every match (one more
    // statement, so not in the page's snapshot; the page is empty anyway).
    WARDEN_ASSIGN_OR_RETURN(Stmt c, db_->Prepare("SELECT (" + JobCountSql(f) + ")"));
    BindListing(c, f, false);
    WARDEN_ASSIGN_OR_RETURN(bool row, c.Step());
    if (row) *total = c.Int(0);
    c.Reset();
  }
  return out;
}

Status SqliteStore::JobRetry(JobId id, const RetryOptions& retry, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_RETURN_IF_ERROR(RetryLocked(id, now, ActionOrigin{audit.actor, 0, retry.fresh}));
  AuditEntry entry = audit;
  entry.count = 1;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  return tx->Commit();
}

Result<SqliteStore::StateAndGroup> SqliteStore::JobStateAndGroupLocked(JobId id) {
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT state, " WARDEN_GROUP_COLUMNS " FROM jobs WHERE id = ?"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
  if (!row) return NotFound("no job with id " + std::to_string(id));
  StateAndGroup out{ParseJobState(q.Text(0)).value_or(JobState::kDead),
                    JobGroup{q.Text(1), q.Text(2), q.Int(3) != 0}};
  q.Reset();  // a cached statement left mid-step would keep its read open
  return out;
}

Status SqliteStore::JobActionLocked(JobId id, TimeMs now, const char* action,
                                    const ActionOrigin& origin) {
  WARDEN_ASSIGN_OR_RETURN(
      Stmt ins, db_->Prepare(std::string("INSERT INTO job_actions (job_id, at, action, actor, "
                                         "op_id, fresh, from_state, ") +
                             "finished_at, last_error, charged, max_attempts, crashes, "
                             "max_crashes) SELECT id, ?, ?, ?, ?, ?, " + kJobActionCopied +
                             " FROM jobs WHERE id = ?"));
  ins.Bind(1, now).Bind(2, action).Bind(3, origin.actor);
  ins.Bind(4, origin.op > 0 ? std::optional<int64_t>(origin.op) : std::nullopt);
  return ins.Bind(5, origin.fresh ? 1 : 0).Bind(6, id).Exec().status();
}

Result<std::vector<JobActionInfo>> SqliteStore::JobActions(JobId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(std::string("SELECT ") + kJobActionColumns +
                                               " FROM job_actions WHERE job_id = ? ORDER BY id"));
  q.Bind(1, id);
  std::vector<JobActionInfo> out;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    JobActionInfo a;
    a.at = q.Int(0);
    a.action = q.Text(1);
    a.actor = q.Text(2);
    a.op = q.OptInt(3).value_or(0);
    a.fresh = q.Int(4) != 0;
    a.from = ParseJobState(q.Text(5)).value_or(JobState::kDead);
    a.finished_at = q.OptInt(6);
    a.last_error = ParseErrorKind(q.Text(7));
    a.charged = static_cast<int>(q.Int(8));
    a.max_attempts = static_cast<int>(q.Int(9));
    a.crashes = static_cast<int>(q.Int(10));
    a.max_crashes = static_cast<int>(q.Int(11));
    out.push_back(std::move(a));
  }
  q.Reset();
  return out;
}

Status SqliteStore::RetryLocked(JobId id, TimeMs now, const ActionOrigin& origin) {
  WARDEN_ASSIGN_OR_RETURN(const StateAndGroup job, JobStateAndGroupLocked(id));
  const JobState state = job.state;
  const JobGroup& group = job.group;
  WARDEN_RETURN_IF_ERROR(CheckRetryAllowed(id, state));
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE jobs SET state = 'available', run_at = ?, charged = 0, "
                             "crashes = 0, finished_at = NULL, start_deadline_at = NULL, "
                             "checkpoint = CASE WHEN ? THEN NULL ELSE checkpoint END "
                             "WHERE id = ?"));
  // The action's row first: it copies how the job had ended.
  WARDEN_RETURN_IF_ERROR(JobActionLocked(id, now, "retry", origin));
  Status s = upd.Bind(1, now).Bind(2, origin.fresh ? 1 : 0).Bind(3, id).Exec().status();
  if (s.code() == StatusCode::kFailedPrecondition) {
    // Refused (a bulk retry goes on in this transaction): no retry to show.
    WARDEN_ASSIGN_OR_RETURN(
        Stmt undo, db_->Prepare("DELETE FROM job_actions WHERE id = (SELECT max(id) FROM "
                                "job_actions WHERE job_id = ?)"));
    WARDEN_RETURN_IF_ERROR(undo.Bind(1, id).Exec().status());
    return FailedPrecondition("job " + std::to_string(id) +
                              ": another live job holds its unique key");
  }
  WARDEN_RETURN_IF_ERROR(s);
  CountChanges counts;
  counts.Move(group, state, JobState::kAvailable);
  return counts.Apply(*db_);
}

Status SqliteStore::JobRunNow(JobId id, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(const StateAndGroup job, JobStateAndGroupLocked(id));
  const JobState state = job.state;
  const JobGroup& group = job.group;
  WARDEN_RETURN_IF_ERROR(CheckRunNowAllowed(id, state));
  WARDEN_RETURN_IF_ERROR(JobActionLocked(id, now, "run_now", ActionOrigin{audit.actor}));
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE jobs SET state = 'available', run_at = ? WHERE id = ?"));
  WARDEN_RETURN_IF_ERROR(upd.Bind(1, now).Bind(2, id).Exec().status());
  CountChanges counts;
  counts.Move(group, state, JobState::kAvailable);
  WARDEN_RETURN_IF_ERROR(counts.Apply(*db_));
  AuditEntry entry = audit;
  entry.count = 1;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  return tx->Commit();
}

Result<JobState> SqliteStore::JobCancel(JobId id, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(JobState state, CancelLocked(id, now, ActionOrigin{audit.actor}));
  AuditEntry entry = audit;
  entry.count = 1;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return state;
}

Result<JobState> SqliteStore::CancelLocked(JobId id, TimeMs now, const ActionOrigin& origin) {
  WARDEN_ASSIGN_OR_RETURN(const StateAndGroup job, JobStateAndGroupLocked(id));
  const JobState state = job.state;
  const JobGroup& group = job.group;
  WARDEN_RETURN_IF_ERROR(CheckCancelAllowed(id, state));
  WARDEN_RETURN_IF_ERROR(JobActionLocked(id, now, "cancel", origin));
  if (state == JobState::kRunning) {
    WARDEN_ASSIGN_OR_RETURN(Stmt upd,
                            db_->Prepare("UPDATE jobs SET cancel_requested = 1 WHERE id = ?"));
    WARDEN_RETURN_IF_ERROR(upd.Bind(1, id).Exec().status());
  } else {
    WARDEN_ASSIGN_OR_RETURN(
        Stmt upd, db_->Prepare("UPDATE jobs SET state = 'cancelled', finished_at = ?, "
                               "last_error = 'cancelled' WHERE id = ?"));
    WARDEN_RETURN_IF_ERROR(upd.Bind(1, now).Bind(2, id).Exec().status());
    CountChanges counts;
    counts.Move(group, state, JobState::kCancelled);
    WARDEN_RETURN_IF_ERROR(counts.Apply(*db_));
  }
  return state == JobState::kRunning ? JobState::kRunning : JobState::kCancelled;
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

// Without reading the waiting jobs (schema 11): the waiting groups are
// job_counts' rows, each scheduled or retryable group's soonest run_at is
// one probe of jobs_due_group, and only the running jobs (as many as the
// live workers' slots) are read, through jobs_running_worker. Cost: groups x
// one index probe, however many jobs wait (it was a GROUP BY over every
// waiting job: 1.4 s at a million). Available groups get no run_at (see
// BacklogGroup). (`c.command + 0`: without the column's INTEGER affinity,
// so that the probe seeks on the indexed expression instead of reading the
// whole (queue, task) range and sorting it.) Ordered as before: available groups, then scheduled
// and retryable ones, then running ones, each part by its group's key. ?1: a JSON array of queues,
// [] for every queue.
const char* const kBacklogSql =
    "SELECT c.queue, c.task, c.command, c.state, c.n, CASE WHEN c.state = 'available' THEN 0 "
    "ELSE (SELECT j.run_at FROM jobs j INDEXED BY jobs_due_group WHERE j.queue = c.queue AND "
    "j.task = c.task AND (j.command <> '') = c.command + 0 AND j.state = c.state AND "
    "j.state IN ('scheduled', 'retryable') ORDER BY j.run_at LIMIT 1) END, "
    "c.state <> 'available' FROM job_counts c WHERE c.n > 0 AND c.state IN ('available', "
    "'scheduled', 'retryable') AND (?1 = '[]' OR c.queue IN (SELECT value FROM "
    "json_each(?1))) "
    "UNION ALL SELECT queue, task, command <> '', 'running', count(*), min(run_at), 2 FROM jobs "
    "INDEXED BY jobs_running_worker WHERE state = 'running' AND worker_id IS NOT NULL AND (?1 "
    "= '[]' OR queue IN (SELECT value FROM json_each(?1))) GROUP BY 1, 2, 3 "
    "ORDER BY 7, 1, 2, 3, 4";

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
