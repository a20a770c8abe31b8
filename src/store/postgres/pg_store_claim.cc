// PgStore: the claim path: promoting due jobs, the pick, the claim and start marks.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "store/postgres/pg_rows.h"
#include "store/postgres/pg_schema.h"
#include "store/postgres/pg_store.h"

namespace warden::pg {

Result<int> PgStore::PromoteDueLocked(TimeMs now) {
  // SKIP LOCKED: several workers promoting at once never wait for each other.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("UPDATE warden.jobs SET state = 'available' WHERE id IN (SELECT id "
                          "FROM warden.jobs WHERE state IN ('scheduled', 'retryable') AND "
                          "run_at <= $1::bigint ORDER BY run_at LIMIT 10000 FOR UPDATE SKIP "
                          "LOCKED)",
                          Params().Add(now)));
  return r.affected();
}

namespace {

// Claimable jobs of warden.jobs j in the queue `queue` (an SQL expression),
// or in every queue when `queue` is empty, for the tasks $3 and, if $4,
// commands; `now` is an SQL expression.
std::string ClaimableWhere(const std::string& now, const std::string& queue) {
  std::string sql = "j.state = 'available' AND (j.start_deadline_at IS NULL OR "
                    "j.start_deadline_at >= " + now + ") ";
  sql += queue.empty() ? "AND $2::text[] = '{}' " : "AND j.queue = " + queue + " ";
  // Paused queues: a named one is checked once (an uncorrelated subquery);
  // the arms of a merged claim get only unpaused queues (PickSql).
  if (queue.empty()) {
    sql += "AND NOT EXISTS (SELECT 1 FROM warden.queue_pauses qp WHERE qp.queue = j.queue) ";
  } else if (queue == "$2") {
    sql += "AND NOT EXISTS (SELECT 1 FROM warden.queue_pauses qp WHERE qp.queue = $2) ";
  }
  sql +=
      "AND (j.task = ANY($3::text[]) OR ($4::boolean AND j.command <> '')) "
      "AND ($4::boolean OR j.command = '') "
      "AND (j.concurrency_key IS NULL OR NOT EXISTS (SELECT 1 FROM warden.jobs r WHERE "
      "r.state = 'running' AND r.concurrency_key = j.concurrency_key)) ";
  return sql;
}

constexpr const char* kClaimOrder = "ORDER BY j.priority DESC, j.run_at, j.id ";

// SafeToClaimAhead (core/claim_ahead.h) in SQL; the conformance test
// ClaimAheadTakesOnlyJobsALossCannotKill checks that both agree.
constexpr const char* kSafeToClaimAhead =
    "(j.delivery = 'at_most_once' OR (j.crashes = 0 AND j.max_crashes > 1 AND j.retry <> "
    "'none' AND (j.retry = 'forever' OR j.charged + 1 < j.max_attempts)))";

}  // namespace

std::string PickSql(const ClaimParams& p, const std::string& now, const std::string& from) {
  const std::string jobs = "FROM warden.jobs j" + from + " WHERE ";
  const std::string limit = "LIMIT $5::int FOR UPDATE OF j SKIP LOCKED";
  if (p.queues.size() < 2) {
    // One queue: the claim index (queue, priority, run_at, id) is walked in
    // order and the scan stops at the limit, however long the backlog.
    // (None means every queue: no worker claims so.)
    return std::string("SELECT j.id, j.concurrency_key, j.priority, j.run_at, ") +
           kSafeToClaimAhead + " AS safe " + jobs +
           ClaimableWhere(now, p.queues.empty() ? "" : "$2") + kClaimOrder + limit;
  }
  // Several queues: the same walk in each, merged. `j.queue = ANY(...)`
  // cannot use the index's order, so it sorted every available job of those
  // queues on each claim. The rows an arm locks beyond the merged limit
  // stay locked (unclaimed) only until this transaction ends.
  return std::string(
             "SELECT m.id, m.concurrency_key, m.priority, m.run_at, m.safe FROM "
             "(SELECT name FROM unnest($2::text[]) AS u(name) WHERE NOT EXISTS (SELECT 1 "
             "FROM warden.queue_pauses qp WHERE qp.queue = u.name)) AS q(name) "
             "CROSS JOIN LATERAL (SELECT j.id, "
             "j.concurrency_key, j.priority, j.run_at, ") +
         kSafeToClaimAhead + " AS safe " + jobs + ClaimableWhere(now, "q.name") + kClaimOrder +
         limit +
         ") m ORDER BY m.priority DESC, m.run_at, m.id LIMIT $5::int";
}

void AddPickParams(Params& params, const ClaimParams& p, std::optional<int64_t> now) {
  params.Add(now);
  if (p.queues.size() == 1) {
    params.Add(p.queues[0]);
  } else {
    params.AddArray(p.queues);
  }
  params.AddArray(p.tasks).Add(p.allow_commands).Add(p.limit);
}

Result<std::vector<JobId>> PgStore::PickLocked(const ClaimParams& p, TimeMs now) {
  Params params;
  AddPickParams(params, p, std::optional<int64_t>(now));
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(PickSql(p, "$1::bigint", ""), params));

  struct Pick {
    JobId id;
    std::optional<std::string> key;
  };
  std::vector<Pick> picks;  // in claim order
  std::vector<std::string> keys;
  std::unordered_set<std::string> seen;  // one job per concurrency key per batch
  // Rows past the free slots' share are taken only if safe to claim ahead.
  const int for_free_slots = p.limit - std::clamp(p.ahead, 0, p.limit);
  for (int i = 0; i < r.size(); ++i) {
    if (i >= for_free_slots && !r.Bool(i, 4)) continue;
    if (r.IsNull(i, 1)) {
      picks.push_back({r.Int(i, 0), std::nullopt});
    } else if (seen.insert(r.Text(i, 1)).second) {
      picks.push_back({r.Int(i, 0), r.Text(i, 1)});
      keys.push_back(r.Text(i, 1));
    }
  }
  std::unordered_set<std::string> locked;
  if (!keys.empty()) {
    // Two claimers may each have picked a different job with the same key.
    // A transaction-scoped lock per key lets one of them through; the other
    // skips the key, and the claim UPDATE re-checks under the lock.
    WARDEN_ASSIGN_OR_RETURN(
        Rows locks, conn_->Exec("SELECT k FROM unnest($2::text[]) AS u(k) WHERE "
                                "pg_try_advisory_xact_lock($1::int, hashtext(k))",
                                Params().Add(kConcurrencyLockClass).AddArray(keys)));
    for (int i = 0; i < locks.size(); ++i) locked.insert(locks.Text(i, 0));
  }
  std::vector<JobId> ids;
  for (const Pick& pick : picks) {
    if (!pick.key || locked.count(*pick.key)) ids.push_back(pick.id);
  }
  return ids;
}

Result<std::vector<JobInfo>> PgStore::JobClaim(const ClaimParams& p) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(std::optional<std::vector<JobInfo>> fast, ClaimInOneStatementLocked(p));
  if (fast.has_value()) return std::move(*fast);
  return ClaimInTransactionLocked(p);
}

Result<std::optional<std::vector<JobInfo>>> PgStore::ClaimInOneStatementLocked(
    const ClaimParams& p) {
  // One round trip instead of five (BEGIN, worker and promotion, pick,
  // claim, COMMIT) when nothing needs the transaction's order: no scheduled
  // or retryable job is due (promoting it first lets it be picked in the
  // same claim, by priority), and no picked job has a concurrency key (see
  // ClaimInTransactionLocked). Then it claims nothing and says so.
  // FOR SHARE orders the claim against a declaration of death, as there.
  Params params;
  AddPickParams(params, p, FakeNow());
  params.Add(p.worker).Add(static_cast<int64_t>(p.default_lease.count()));
  params.Add(std::clamp(p.ahead, 0, p.limit));
  WARDEN_ASSIGN_OR_RETURN(
      Rows r,
      conn_->Exec(
          std::string(
              "WITH w AS MATERIALIZED (SELECT coalesce($1::bigint, warden.now_ms()) AS now "
              "FROM warden.workers WHERE id = $6::bigint AND state = 'active' FOR SHARE), "
              "pick AS MATERIALIZED (") +
              PickSql(p, "w.now", ", w") +
              "), "
              // Rows past the free slots' share only if safe to claim ahead.
              "take AS MATERIALIZED (SELECT id FROM (SELECT id, safe, row_number() OVER "
              "(ORDER BY priority DESC, run_at, id) AS n FROM pick) o WHERE o.n <= $5::int - "
              "$8::int OR o.safe), "
              "fast AS MATERIALIZED (SELECT NOT EXISTS (SELECT 1 FROM pick WHERE "
              "concurrency_key IS NOT NULL) AND NOT EXISTS (SELECT 1 FROM warden.jobs d, w "
              "WHERE d.state IN ('scheduled', 'retryable') AND d.run_at <= w.now) AS ok), "
              "claimed AS (UPDATE warden.jobs j SET state = 'running', worker_id = "
              "$6::bigint, lease_token = j.lease_token + 1, attempt = j.attempt + 1, "
              "active_lease_ms = COALESCE(j.lease_ms, $7::bigint), lease_expires_at = w.now + "
              "COALESCE(j.lease_ms, $7::bigint), started_mark = false, cancel_requested = "
              "false, started_at = w.now FROM take, w, fast WHERE j.id = take.id AND fast.ok "
              "RETURNING " +
              kJobColumns +
              "), att AS (INSERT INTO warden.attempts (job_id, attempt, worker_id, "
              "lease_token, claimed_at) SELECT id, attempt, $6::bigint, lease_token, "
              "started_at FROM claimed) "
              "SELECT c.*, (SELECT count(*) FROM w), (SELECT ok FROM fast) "
              "FROM (SELECT 1) one LEFT JOIN claimed c ON true",
          params));
  // One row at least; the last two columns say whether the worker is active
  // and whether this statement could claim.
  const int active_col = kJobColumnCount, fast_col = kJobColumnCount + 1;
  if (r.empty() || r.Int(0, active_col) == 0) {
    return FailedPrecondition("worker " + std::to_string(p.worker) +
                              " is not active (declared dead, draining or stopped)");
  }
  if (!r.Bool(0, fast_col)) return std::optional<std::vector<JobInfo>>();
  std::vector<JobInfo> claimed;
  for (int i = 0; i < r.size(); ++i) {
    if (!r.IsNull(i, 0)) claimed.push_back(JobFromRow(r, i));
  }
  // In claim order, as the SQLite backend returns them (the pick's order).
  std::sort(claimed.begin(), claimed.end(), [](const JobInfo& a, const JobInfo& b) {
    return std::tie(b.priority, a.run_at, a.id) < std::tie(a.priority, b.run_at, b.id);
  });
  return std::optional<std::vector<JobInfo>>(std::move(claimed));
}

// The jobs are still available: the pick, earlier in the same transaction,
// locked them FOR UPDATE while they were. Saying `j.state = 'available'`
// here let the planner read all of jobs_claim, filtering by id, whenever
// statistics said no job was available (taken before a backlog came).
const std::string kClaimPickedSql =
    std::string(
        "WITH t AS MATERIALIZED (SELECT coalesce($3::bigint, warden.now_ms()) AS now), "
        "claimed AS (UPDATE warden.jobs j SET state = 'running', worker_id = $1::bigint, "
        "lease_token = lease_token + 1, attempt = attempt + 1, active_lease_ms = "
        "COALESCE(lease_ms, $2::bigint), lease_expires_at = t.now + COALESCE(lease_ms, "
        "$2::bigint), started_mark = false, cancel_requested = false, started_at = t.now FROM t "
        "WHERE j.id = ANY($4::bigint[]) AND (j.concurrency_key IS NULL OR NOT EXISTS (SELECT 1 "
        "FROM warden.jobs r WHERE r.state = 'running' AND r.concurrency_key = "
        "j.concurrency_key)) RETURNING ") +
    kJobColumns +
    "), att AS (INSERT INTO warden.attempts (job_id, attempt, worker_id, lease_token, "
    "claimed_at) SELECT id, attempt, $1::bigint, lease_token, started_at FROM claimed) "
    "SELECT * FROM claimed";

Result<std::vector<JobInfo>> PgStore::ClaimInTransactionLocked(const ClaimParams& p) {
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  // FOR SHARE orders this claim against a concurrent declaration of death:
  // either the death waits and then recovers what we claimed, or we see the
  // worker dead and claim nothing. The same statement makes due scheduled
  // and retryable jobs available (as PromoteDueLocked does), so a claim
  // never waits for the sweeper; the pick, a later statement of this
  // transaction, sees them. One round trip for both.
  WARDEN_ASSIGN_OR_RETURN(
      Rows w,
      conn_->Exec("WITH w AS MATERIALIZED (SELECT coalesce($2::bigint, warden.now_ms()) AS now "
                  "FROM warden.workers WHERE id = $1::bigint AND state = 'active' FOR SHARE), "
                  "promoted AS (UPDATE warden.jobs SET state = 'available' WHERE id IN (SELECT "
                  "id FROM warden.jobs, w WHERE state IN ('scheduled', 'retryable') AND run_at "
                  "<= w.now ORDER BY run_at LIMIT 10000 FOR UPDATE OF jobs SKIP LOCKED) "
                  "RETURNING 1) SELECT w.now, (SELECT count(*) FROM promoted) FROM w",
                  Params().Add(p.worker).Add(FakeNow())));
  if (w.empty()) {
    return FailedPrecondition("worker " + std::to_string(p.worker) +
                              " is not active (declared dead, draining or stopped)");
  }
  const TimeMs now = w.Int(0, 0);
  const int64_t promoted = w.Int(0, 1);
  WARDEN_ASSIGN_OR_RETURN(auto ids, PickLocked(p, now));
  if (ids.empty()) {
    // Keep promotions (jobs for other workers' tasks); otherwise roll back.
    if (promoted > 0) WARDEN_RETURN_IF_ERROR(tx->Commit());
    return std::vector<JobInfo>{};
  }

  // The claim's times are read in the claim statement itself, not at the
  // start of the transaction: its snapshot may include a completion of the
  // same concurrency key that committed meanwhile, and the new attempt must
  // not appear to start before that one finished.
  Params params;
  params.Add(p.worker)
      .Add(static_cast<int64_t>(p.default_lease.count()))
      .Add(fake_clock_ ? std::optional<int64_t>(now) : std::nullopt)
      .AddArray(ids);
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(kClaimPickedSql, params));
  std::vector<JobInfo> claimed;
  claimed.reserve(r.size());
  for (int i = 0; i < r.size(); ++i) claimed.push_back(JobFromRow(r, i));
  // In claim order, as the SQLite backend returns them.
  std::map<JobId, size_t> order;
  for (size_t i = 0; i < ids.size(); ++i) order[ids[i]] = i;
  std::sort(claimed.begin(), claimed.end(),
            [&](const JobInfo& a, const JobInfo& b) { return order[a.id] < order[b.id]; });
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return claimed;
}

Result<bool> PgStore::JobMarkStarted(JobRef ref) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  // One statement, so one transaction: the mark and the attempt's start.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("WITH j AS (UPDATE warden.jobs SET started_mark = true WHERE id = "
                          "$1::bigint AND lease_token = $2::bigint AND state = 'running' AND "
                          "NOT cancel_requested RETURNING id, attempt), a AS (UPDATE "
                          "warden.attempts a SET started_at = $3::bigint FROM j WHERE a.job_id "
                          "= j.id AND a.attempt = j.attempt) SELECT count(*) FROM j",
                          Params().Add(ref.id).Add(ref.lease_token).Add(now)));
  return r.Int(0, 0) == 1;
}

}  // namespace warden::pg
