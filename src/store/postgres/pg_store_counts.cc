// PgStore: the jobs by queue and state, read from job_counts plus the
// deltas the job path appended since the last fold (schema 11, see
// migrations/postgres/0011_job_counts.sql), and the oldest available job
// of each queue, found by index probes. Neither reads every job: /metrics,
// `warden queues` and the stats cost the same at a million jobs as at ten.
#include <string>
#include <vector>

#include "store/postgres/pg_schema.h"
#include "store/postgres/pg_store.h"
#include "store/queue_rows.h"

namespace warden::pg {
namespace {

// The kept counts at this statement's snapshot: the folded totals plus the
// deltas not folded yet (as many as the job path's statements since the
// last fold, about a second's worth).
#define WARDEN_COUNTS_CTE                                                                      \
  "counts(queue, state, n) AS (SELECT queue, state, sum(n)::bigint FROM (SELECT queue, "      \
  "state, n FROM warden.job_counts UNION ALL SELECT queue, state, n FROM "                     \
  "warden.job_count_deltas) a GROUP BY queue, state)"

// Each queue's oldest available job without reading its available jobs:
// jobs_claim orders a queue's entries by priority first, so the least
// run_at is the least of each priority's first entry. `p` walks the
// queue's distinct priorities, one probe each, and `oldest` takes the first
// run_at of each. Cost: queues x distinct priorities x one index probe.
#define WARDEN_OLDEST_AVAILABLE_CTE                                                            \
  "p(queue, pr) AS (SELECT c.queue, (SELECT j.priority FROM warden.jobs j WHERE j.queue = "    \
  "c.queue AND j.state = 'available' ORDER BY j.priority DESC LIMIT 1) FROM counts c WHERE "   \
  "c.state = 'available' AND c.n > 0 "                                                        \
  "UNION ALL SELECT p.queue, (SELECT j.priority FROM warden.jobs j WHERE j.queue = p.queue "   \
  "AND j.state = 'available' AND j.priority < p.pr ORDER BY j.priority DESC LIMIT 1) FROM p "  \
  "WHERE p.pr IS NOT NULL), "                                                                 \
  "oldest(queue, at) AS (SELECT p.queue, min((SELECT j.run_at FROM warden.jobs j WHERE "       \
  "j.queue = p.queue AND j.state = 'available' AND j.priority = p.pr ORDER BY j.run_at LIMIT " \
  "1)) FROM p WHERE p.pr IS NOT NULL GROUP BY p.queue)"

const char* const kQueueCountsSql =
    "WITH RECURSIVE " WARDEN_COUNTS_CTE ", " WARDEN_OLDEST_AVAILABLE_CTE
    " SELECT c.queue, c.state, c.n, CASE WHEN c.state = 'available' THEN o.at END "
    "FROM counts c LEFT JOIN oldest o ON o.queue = c.queue WHERE c.n > 0 "
    "ORDER BY c.queue, c.state";

const char* const kStateCountsSql =
    "WITH " WARDEN_COUNTS_CTE
    " SELECT state, sum(n)::bigint FROM counts GROUP BY state HAVING sum(n) > 0 ORDER BY state";

const char* const kCountUnfinishedSql =
    "WITH " WARDEN_COUNTS_CTE
    " SELECT coalesce(sum(n), 0)::bigint FROM counts WHERE state IN ('scheduled', "
    "'available', 'running', 'retryable')";

#undef WARDEN_OLDEST_AVAILABLE_CTE
#undef WARDEN_COUNTS_CTE

// One statement, so no transaction to hold open. The try-lock keeps two
// folders from waiting on each other's rows (the loser folds nothing: the
// winner takes what it would have); a delta appended by a transaction not
// yet committed is not seen, so it stays for the next fold.
const char* const kFoldSql =
    "WITH l AS (SELECT pg_try_advisory_xact_lock($1::int, $2::int) AS ok), "
    "d AS (DELETE FROM warden.job_count_deltas WHERE (SELECT ok FROM l) RETURNING queue, "
    "state, task, command, n) "
    "INSERT INTO warden.job_counts AS c (queue, state, task, command, n) SELECT queue, state, "
    "task, command, sum(n) FROM d GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4 "
    "ON CONFLICT (queue, state, task, command) DO UPDATE SET n = c.n + excluded.n";

}  // namespace

Status PgStore::FoldLocked() {
  return conn_->Exec(kFoldSql, Params().Add(kLockClass).Add(kJobCountsFoldLock)).status();
}

Status PgStore::JobCountsFold() {
  MutexLock lock(mu_);
  return FoldLocked();
}

Result<std::vector<QueueInfo>> PgStore::QueueList() {
  MutexLock lock(mu_);
  // A reader folds too (when no maintenance leader runs, only readers do).
  WARDEN_RETURN_IF_ERROR(FoldLocked());
  QueueRows queues;
  WARDEN_ASSIGN_OR_RETURN(Rows counts, conn_->Exec(kQueueCountsSql));
  for (int i = 0; i < counts.size(); ++i) {
    queues.AddCount(counts.Text(i, 0), counts.Text(i, 1), counts.Int(i, 2), counts.OptInt(i, 3));
  }
  WARDEN_ASSIGN_OR_RETURN(Rows pauses,
                          conn_->Exec("SELECT queue, paused_at FROM warden.queue_pauses"));
  for (int i = 0; i < pauses.size(); ++i) queues.AddPause(pauses.Text(i, 0), pauses.Int(i, 1));
  WARDEN_ASSIGN_OR_RETURN(
      Rows limits,
      conn_->Exec("SELECT queue, concurrency, rate_count, rate_ms FROM warden.queue_limits"));
  for (int i = 0; i < limits.size(); ++i) {
    QueueLimits l;
    l.concurrency = limits.OptInt(i, 1);
    if (!limits.IsNull(i, 2) && !limits.IsNull(i, 3)) {
      l.rate = RateLimit{limits.Int(i, 2), Millis(limits.Int(i, 3))};
    }
    queues.AddLimits(limits.Text(i, 0), l);
  }
  return queues.Take();
}

Result<std::vector<std::pair<std::string, int64_t>>> PgStore::StateCountsLocked() {
  WARDEN_RETURN_IF_ERROR(FoldLocked());
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(kStateCountsSql));
  std::vector<std::pair<std::string, int64_t>> out;
  for (int i = 0; i < r.size(); ++i) out.emplace_back(r.Text(i, 0), r.Int(i, 1));
  return out;
}

Result<int64_t> PgStore::JobCountUnfinished() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(kCountUnfinishedSql));
  return r.Int(0, 0);
}

Result<std::vector<JobCountDrift>> PgStore::JobCountsVerify() {
  MutexLock lock(mu_);
  // One statement: the kept and the real counts from one snapshot.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r,
      conn_->Exec("WITH kept AS (SELECT queue, state, task, command, sum(n)::bigint AS n FROM "
                  "(SELECT queue, state, task, command, n FROM warden.job_counts UNION ALL "
                  "SELECT queue, state, task, command, n FROM warden.job_count_deltas) a GROUP "
                  "BY 1, 2, 3, 4 HAVING sum(n) <> 0), "
                  "real AS (SELECT queue, state, task, command <> '' AS command, "
                  "count(*)::bigint AS n FROM warden.jobs GROUP BY 1, 2, 3, 4) "
                  "SELECT queue, state, coalesce(k.n, 0), coalesce(r.n, 0), task, command FROM "
                  "kept k FULL JOIN real r USING (queue, state, task, command) WHERE k.n IS "
                  "DISTINCT FROM r.n ORDER BY 1, 2, 5, 6"));
  std::vector<JobCountDrift> out;
  for (int i = 0; i < r.size(); ++i) {
    out.push_back(JobCountDrift{r.Text(i, 0), r.Text(i, 1), r.Int(i, 2), r.Int(i, 3),
                                r.Text(i, 4), r.Bool(i, 5)});
  }
  return out;
}

}  // namespace warden::pg
