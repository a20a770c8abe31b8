// PgStore: reads and admin: attempts, get, list, retry, cancel, counts, next due, backlog.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/operator_rules.h"
#include "store/postgres/pg_rows.h"
#include "store/postgres/pg_store.h"

namespace warden::pg {

Result<std::vector<AttemptInfo>> PgStore::AttemptsLocked(JobId id) {
  WARDEN_ASSIGN_OR_RETURN(
      Rows q, conn_->Exec("SELECT a.attempt, a.worker_id, a.lease_token, a.claimed_at, "
                          "a.started_at, a.finished_at, a.outcome, a.error_message, a.exit_code, "
                          "a.signal, a.stderr_tail, w.name, a.stdout_tail, a.lost_by, "
                          "a.runnable_at FROM warden.attempts a LEFT JOIN warden.workers w ON "
                          "w.id = a.worker_id WHERE a.job_id = $1::bigint ORDER BY a.attempt",
                          Params().Add(id)));
  std::vector<AttemptInfo> out;
  for (int i = 0; i < q.size(); ++i) {
    out.push_back(AttemptFromRow(q, i));
  }
  return out;
}

Result<std::vector<FencedWriteInfo>> PgStore::JobFencedWrites(JobId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("SELECT f.at, f.worker_id, w.name, f.lease_token, f.what FROM "
                          "warden.fenced_writes f LEFT JOIN warden.workers w ON w.id = "
                          "f.worker_id WHERE f.job_id = $1::bigint ORDER BY f.id",
                          Params().Add(id)));
  std::vector<FencedWriteInfo> out;
  for (int i = 0; i < r.size(); ++i) {
    out.push_back(FencedWriteInfo{r.Int(i, 0), r.Int(i, 1), r.Text(i, 2), r.Int(i, 3),
                                  r.Text(i, 4)});
  }
  return out;
}

Result<JobInfo> PgStore::JobGet(JobId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec(std::string("SELECT ") + kJobColumns + ", " + JobExtraColumns("j") +
                              " FROM warden.jobs j WHERE id = $1::bigint",
                          Params().Add(id)));
  if (r.empty()) return NotFound("no job with id " + std::to_string(id));
  JobInfo job = JobFromRow(r, 0);
  JobExtrasFromRow(r, 0, kJobColumnCount, &job);
  WARDEN_ASSIGN_OR_RETURN(job.attempts, AttemptsLocked(id));
  return job;
}

// `FROM warden.jobs j WHERE ...` for the conditions `f` gives but its
// cursor, their values appended to `p`; only the conditions given are in
// the SQL, so the planner sees plain terms for the indexes.
std::string ListedWhere(const JobFilter& f, Params* p) {
  std::string sql = " FROM warden.jobs j WHERE true";
  int n = static_cast<int>(p->values().size());
  auto param = [&]() {
    std::string name = "$";
    name += std::to_string(++n);
    return name;
  };
  if (!f.states.empty()) {
    std::vector<std::string> states;
    for (JobState s : f.states) states.push_back(JobStateName(s));
    p->AddArray(states);
    sql += " AND j.state = ANY(" + param() + "::text[])";
  }
  auto text = [&](const std::string& column, const std::string& value) {
    if (value.empty()) return;
    p->Add(value);
    sql += " AND j." + column + " = " + param();
  };
  text("queue", f.queue);
  text("task", f.task);
  text("unique_key", f.unique_key);
  text("concurrency_key", f.concurrency_key);
  if (f.error_kind) text("last_error", ErrorKindName(*f.error_kind));
  auto bound = [&](const std::string& term, const std::optional<TimeMs>& t) {
    if (!t) return;
    p->Add(*t);
    sql += " AND j." + term + " " + param() + "::bigint";
  };
  bound("created_at >=", f.created_after);
  bound("created_at <", f.created_before);
  bound("finished_at >=", f.finished_after);
  bound("finished_at <", f.finished_before);
  if (!f.search.empty()) {
    p->Add(f.search);
    const std::string q = param();
    const std::string message = LastErrorMessageSql("j");
    sql += " AND (strpos(j.payload::text, " + q + ") > 0 OR strpos(coalesce(" + message +
           ", ''), " + q + ") > 0)";
  }
  if (f.rescued) {
    sql +=
        " AND EXISTS (SELECT 1 FROM warden.attempts a WHERE a.job_id = j.id AND "
        "a.outcome = 'lost')";
  }
  if (f.max_id > 0) {
    p->Add(f.max_id);
    sql += " AND j.id <= " + param() + "::bigint";
  }
  return sql;
}

// ListedWhere's and the cursor's: the page's conditions.
std::string PageWhere(const JobFilter& f, Params* p, std::string* common) {
  *common = ListedWhere(f, p);
  if (f.before_id <= 0) return *common;
  p->Add(f.before_id);
  std::string page = *common;
  page += " AND j.id < $";
  page += std::to_string(p->values().size());
  return page + "::bigint";
}

Result<std::vector<JobInfo>> PgStore::JobList(const JobFilter& f, int64_t* total) {
  MutexLock lock(mu_);
  Params p;
  std::string common;
  const std::string page = PageWhere(f, &p, &common);
  p.Add(f.limit);
  std::string limit = "$";
  limit += std::to_string(p.values().size());
  // The page first, then the extras of its jobs only; the count, when
  // asked for, in the same statement (one snapshot), cursor aside.
  std::string sql = "SELECT page.*, " + JobExtraColumns("page");
  if (total) sql += ", (SELECT count(*)" + common + ")";
  sql += std::string(" FROM (SELECT ") + kJobColumns + page + " ORDER BY j.id DESC LIMIT " +
         limit + "::int) page ORDER BY page.id DESC";
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(sql, p));
  std::vector<JobInfo> out;
  if (total) *total = 0;
  for (int i = 0; i < r.size(); ++i) {
    out.push_back(JobFromRow(r, i));
    JobExtrasFromRow(r, i, kJobColumnCount, &out.back());
    if (total) *total = r.Int(i, kJobColumnCount + kJobExtraColumnCount);
  }
  if (total && out.empty() && f.before_id > 0) {
    Params c;
    const std::string where = ListedWhere(f, &c);
    WARDEN_ASSIGN_OR_RETURN(Rows n, conn_->Exec("SELECT count(*)" + where, c));
    *total = n.Int(0, 0);
  }
  return out;
}

Result<JobState> PgStore::LockJobStateLocked(JobId id) {
  WARDEN_ASSIGN_OR_RETURN(
      Rows q, conn_->Exec("SELECT state FROM warden.jobs WHERE id = $1::bigint FOR UPDATE",
                          Params().Add(id)));
  if (q.empty()) return NotFound("no job with id " + std::to_string(id));
  return ParseJobState(q.Text(0, 0)).value_or(JobState::kDead);
}

Status PgStore::JobRetry(JobId id, const RetryOptions& retry, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(JobState state, LockJobStateLocked(id));
  WARDEN_RETURN_IF_ERROR(CheckRetryAllowed(id, state));
  WARDEN_RETURN_IF_ERROR(RetryLocked(id, now, ActionOrigin{audit.actor, 0, retry.fresh}));
  AuditEntry entry = audit;
  entry.count = 1;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  return tx->Commit();
}

Status PgStore::JobActionLocked(JobId id, TimeMs now, const char* action,
                                const ActionOrigin& origin) {
  return conn_
      ->Exec(std::string("INSERT INTO warden.job_actions (job_id, at, action, actor, op_id, "
                         "fresh, from_state, finished_at, last_error, charged, max_attempts, "
                         "crashes, max_crashes) SELECT id, $1::bigint, $2, $3, $4::bigint, "
                         "$5::boolean, ") +
                 kJobActionCopied + " FROM warden.jobs WHERE id = $6::bigint",
             Params()
                 .Add(now)
                 .Add(action)
                 .Add(origin.actor)
                 .Add(origin.op > 0 ? std::optional<int64_t>(origin.op) : std::nullopt)
                 .Add(origin.fresh)
                 .Add(id))
      .status();
}

Result<std::vector<JobActionInfo>> PgStore::JobActions(JobId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec(std::string("SELECT ") + kJobActionColumns +
                              " FROM warden.job_actions WHERE job_id = $1::bigint ORDER BY id",
                          Params().Add(id)));
  std::vector<JobActionInfo> out;
  for (int i = 0; i < r.size(); ++i) {
    JobActionInfo a;
    a.at = r.Int(i, 0);
    a.action = r.Text(i, 1);
    a.actor = r.Text(i, 2);
    a.op = r.OptInt(i, 3).value_or(0);
    a.fresh = r.Bool(i, 4);
    a.from = ParseJobState(r.Text(i, 5)).value_or(JobState::kDead);
    a.finished_at = r.OptInt(i, 6);
    a.last_error = ParseErrorKind(r.Text(i, 7));
    a.charged = static_cast<int>(r.Int(i, 8));
    a.max_attempts = static_cast<int>(r.Int(i, 9));
    a.crashes = static_cast<int>(r.Int(i, 10));
    a.max_crashes = static_cast<int>(r.Int(i, 11));
    out.push_back(std::move(a));
  }
  return out;
}

Status PgStore::RetryLocked(JobId id, TimeMs now, const ActionOrigin& origin) {
  // The action's row first: it copies how the job had ended. A refusal
  // below rolls it back with the retry (the caller's transaction or
  // savepoint).
  WARDEN_RETURN_IF_ERROR(JobActionLocked(id, now, "retry", origin));
  Status s = conn_
                 ->Exec("UPDATE warden.jobs SET state = 'available', run_at = $1::bigint, "
                        "charged = 0, crashes = 0, finished_at = NULL, start_deadline_at = NULL, "
                        "checkpoint = CASE WHEN $3::boolean THEN NULL ELSE checkpoint END "
                        "WHERE id = $2::bigint",
                        Params().Add(now).Add(id).Add(origin.fresh))
                 .status();
  if (s.code() == StatusCode::kFailedPrecondition) {
    return FailedPrecondition("job " + std::to_string(id) +
                              ": another live job holds its unique key");
  }
  return s;
}

Status PgStore::JobRunNow(JobId id, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(JobState state, LockJobStateLocked(id));
  WARDEN_RETURN_IF_ERROR(CheckRunNowAllowed(id, state));
  WARDEN_RETURN_IF_ERROR(JobActionLocked(id, now, "run_now", ActionOrigin{audit.actor}));
  WARDEN_RETURN_IF_ERROR(conn_
                             ->Exec("UPDATE warden.jobs SET state = 'available', "
                                    "run_at = $1::bigint WHERE id = $2::bigint",
                                    Params().Add(now).Add(id))
                             .status());
  AuditEntry entry = audit;
  entry.count = 1;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  return tx->Commit();
}

Result<JobState> PgStore::JobCancel(JobId id, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(JobState state, LockJobStateLocked(id));
  WARDEN_RETURN_IF_ERROR(CheckCancelAllowed(id, state));
  WARDEN_RETURN_IF_ERROR(CancelLocked(id, state, now, ActionOrigin{audit.actor}));
  AuditEntry entry = audit;
  entry.count = 1;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return state == JobState::kRunning ? JobState::kRunning : JobState::kCancelled;
}

Status PgStore::CancelLocked(JobId id, JobState state, TimeMs now,
                             const ActionOrigin& origin) {
  WARDEN_RETURN_IF_ERROR(JobActionLocked(id, now, "cancel", origin));
  if (state == JobState::kRunning) {
    return conn_
        ->Exec("UPDATE warden.jobs SET cancel_requested = true WHERE id = $1::bigint",
               Params().Add(id))
        .status();
  }
  return conn_
      ->Exec("UPDATE warden.jobs SET state = 'cancelled', finished_at = $1::bigint, "
             "last_error = 'cancelled' WHERE id = $2::bigint",
             Params().Add(now).Add(id))
      .status();
}

Result<std::optional<Millis>> PgStore::JobNextDueIn() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("SELECT run_at FROM warden.jobs WHERE state IN ('scheduled', "
                          "'retryable') ORDER BY run_at LIMIT 1"));
  if (r.empty()) return std::optional<Millis>();
  return std::optional<Millis>(Millis(std::max<int64_t>(0, r.Int(0, 0) - now)));
}

// As on SQLite (schema 13): the waiting groups from the kept counts (the
// folded rows plus the deltas not folded yet, one snapshot), each scheduled
// or retryable group's soonest run_at by one probe of jobs_due_group, and
// only the running jobs read, through jobs_running_worker. Cost: groups x
// one index probe, however many jobs wait. Ordered as SQLite's (by the
// database's collation).
// $1: the queues, none for every queue.
const char* const kBacklogSql =
    "WITH g AS (SELECT queue, task, command, state, sum(n)::bigint AS n FROM (SELECT queue, "
    "task, command, state, n FROM warden.job_counts UNION ALL SELECT queue, task, command, "
    "state, n FROM warden.job_count_deltas) a WHERE state IN ('available', 'scheduled', "
    "'retryable') AND (cardinality($1::text[]) = 0 OR queue = ANY($1::text[])) GROUP BY 1, 2, "
    "3, 4 HAVING sum(n) > 0) "
    "SELECT g.queue, g.task, g.command, g.state, g.n, CASE WHEN g.state = 'available' THEN 0 "
    "ELSE (SELECT j.run_at FROM warden.jobs j WHERE j.queue = g.queue AND j.task = g.task AND "
    "(j.command <> '') = g.command AND j.state = g.state AND j.state IN ('scheduled', "
    "'retryable') ORDER BY j.run_at LIMIT 1) END, (g.state <> 'available')::int FROM g "
    "UNION ALL SELECT queue, task, command <> '', 'running', count(*), min(run_at), 2 FROM "
    "warden.jobs WHERE state = 'running' AND worker_id IS NOT NULL AND (cardinality($1::text[]) "
    "= 0 OR queue = ANY($1::text[])) GROUP BY 1, 2, 3 "
    "ORDER BY 7, 1, 2, 3, 4";

Result<std::vector<BacklogGroup>> PgStore::JobBacklog(const std::vector<std::string>& queues) {
  MutexLock lock(mu_);
  WARDEN_RETURN_IF_ERROR(FoldLocked());  // as every reader of the counts
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(kBacklogSql, Params().AddArray(queues)));
  std::vector<BacklogGroup> out;
  for (int i = 0; i < r.size(); ++i) {
    BacklogGroup g;
    g.queue = r.Text(i, 0);
    g.task = r.Text(i, 1);
    g.command = r.Bool(i, 2);
    g.state = ParseJobState(r.Text(i, 3)).value_or(JobState::kAvailable);
    g.count = r.Int(i, 4);
    g.next_run_at = r.Int(i, 5);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace warden::pg
