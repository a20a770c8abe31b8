// SqliteStore: the jobs by queue and state, read from job_counts (schema 9;
// by task and command too since 11, see JobBacklog in sqlite_store_admin.cc),
// which the statements that change jobs keep exact (job_counts.h), and the oldest
// available job of each queue, found by index probes. Neither reads every
// job: /metrics, `warden queues` and the stats cost the same at a million
// jobs as at ten.
#include <string>
#include <vector>

#include "store/queue_rows.h"
#include "store/sqlite/sqlite_store.h"

namespace warden::sqlite {
namespace {

// The counts by queue and state: job_counts keeps them by task and command
// too (schema 11), in the order of its key.
#define WARDEN_QUEUE_COUNTS_CTE \
  "qc(queue, state, n) AS (SELECT queue, state, sum(n) FROM job_counts GROUP BY queue, state)"

// Each queue's oldest available job without reading its available jobs:
// jobs_claim orders a queue's entries by priority first, so the least
// run_at is the least of each priority's first entry. `p` walks the
// queue's distinct priorities, one probe each (the next lower priority is
// the first entry past the last one), and `oldest` takes the first run_at
// of each. Cost: queues x distinct priorities of available jobs x one
// index seek.
#define WARDEN_OLDEST_AVAILABLE_CTE                                                            \
  "p(queue, pr) AS (SELECT c.queue, (SELECT j.priority FROM jobs j INDEXED BY jobs_claim "     \
  "WHERE j.queue = c.queue AND j.state = 'available' ORDER BY j.priority DESC LIMIT 1) "       \
  "FROM qc c WHERE c.state = 'available' AND c.n > 0 "                                        \
  "UNION ALL SELECT p.queue, (SELECT j.priority FROM jobs j INDEXED BY jobs_claim WHERE "      \
  "j.queue = p.queue AND j.state = 'available' AND j.priority < p.pr ORDER BY j.priority "    \
  "DESC LIMIT 1) FROM p WHERE p.pr IS NOT NULL), "                                            \
  "oldest(queue, at) AS (SELECT p.queue, min((SELECT j.run_at FROM jobs j INDEXED BY "         \
  "jobs_claim WHERE j.queue = p.queue AND j.state = 'available' AND j.priority = p.pr ORDER "  \
  "BY j.run_at LIMIT 1)) FROM p WHERE p.pr IS NOT NULL GROUP BY p.queue)"

}  // namespace

// Counts and oldest jobs in one statement, so one snapshot.
const char* const kQueueCountsSql =
    "WITH RECURSIVE " WARDEN_QUEUE_COUNTS_CTE ", " WARDEN_OLDEST_AVAILABLE_CTE
    " SELECT c.queue, c.state, c.n, CASE WHEN c.state = 'available' THEN o.at END "
    "FROM qc c LEFT JOIN oldest o ON o.queue = c.queue WHERE c.n > 0 "
    "ORDER BY c.queue, c.state";

#undef WARDEN_OLDEST_AVAILABLE_CTE
#undef WARDEN_QUEUE_COUNTS_CTE

const char* const kJobCountsSql =
    "SELECT state, sum(n) FROM job_counts GROUP BY state HAVING sum(n) > 0 ORDER BY state";

const char* const kCountUnfinishedSql =
    "SELECT coalesce(sum(n), 0) FROM job_counts WHERE state IN ('scheduled', 'available', "
    "'running', 'retryable')";

Result<std::vector<QueueInfo>> SqliteStore::QueueList() {
  MutexLock lock(mu_);
  QueueRows queues;
  WARDEN_ASSIGN_OR_RETURN(Stmt counts, db_->Prepare(kQueueCountsSql));
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, counts.Step());
    if (!row) break;
    queues.AddCount(counts.Text(0), counts.Text(1), counts.Int(2), counts.OptInt(3));
  }
  WARDEN_ASSIGN_OR_RETURN(Stmt pauses, db_->Prepare("SELECT queue, paused_at FROM queue_pauses"));
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, pauses.Step());
    if (!row) break;
    queues.AddPause(pauses.Text(0), pauses.Int(1));
  }
  WARDEN_ASSIGN_OR_RETURN(
      Stmt limits,
      db_->Prepare("SELECT queue, concurrency, rate_count, rate_ms FROM queue_limits"));
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, limits.Step());
    if (!row) break;
    QueueLimits l;
    if (!limits.IsNull(1)) l.concurrency = limits.Int(1);
    if (!limits.IsNull(2) && !limits.IsNull(3)) {
      l.rate = RateLimit{limits.Int(2), Millis(limits.Int(3))};
    }
    queues.AddLimits(limits.Text(0), l);
  }
  return queues.Take();
}

Result<int64_t> SqliteStore::JobCountUnfinished() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(kCountUnfinishedSql));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
  const int64_t n = row ? q.Int(0) : 0;
  q.Reset();
  return n;
}

// The triggers fold each change in as it happens: nothing waits.
Status SqliteStore::JobCountsFold() { return Status::Ok(); }

Result<std::vector<JobCountDrift>> SqliteStore::JobCountsVerify() {
  MutexLock lock(mu_);
  // One statement: the kept and the real counts from one snapshot.
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("WITH kept AS (SELECT queue, state, task, command, n FROM job_counts "
                           "WHERE n <> 0), "
                           "real AS (SELECT queue, state, task, command <> '' AS command, "
                           "count(*) AS n FROM jobs GROUP BY 1, 2, 3, 4) "
                           "SELECT k.queue, k.state, k.n, coalesce(r.n, 0), k.task, k.command "
                           "FROM kept k LEFT JOIN real r USING (queue, state, task, command) "
                           "WHERE r.n IS NOT k.n "
                           "UNION ALL SELECT r.queue, r.state, 0, r.n, r.task, r.command FROM "
                           "real r WHERE NOT EXISTS (SELECT 1 FROM kept k WHERE k.queue = "
                           "r.queue AND k.state = r.state AND k.task = r.task AND k.command = "
                           "r.command) ORDER BY 1, 2, 5, 6"));
  std::vector<JobCountDrift> out;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(
        JobCountDrift{q.Text(0), q.Text(1), q.Int(2), q.Int(3), q.Text(4), q.Int(5) != 0});
  }
  return out;
}

}  // namespace warden::sqlite
