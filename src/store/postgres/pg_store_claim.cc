// PgStore: the claim path: promoting due jobs, the pick, the claim and start marks.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "store/claim_flow.h"
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
// commands, not kept from the claimer's node $6; `now` is an SQL expression.
// `exclude_blocked` (every queue only): not the limited queues without
// room, $7.
std::string ClaimableWhere(const std::string& now, const std::string& queue,
                           bool exclude_blocked = false) {
  std::string sql = "j.state = 'available' AND (j.start_deadline_at IS NULL OR "
                    "j.start_deadline_at >= " + now + ") ";
  sql += queue.empty() ? "AND $2::text[] = '{}' " : "AND j.queue = " + queue + " ";
  // Paused queues: a named one is checked once (an uncorrelated subquery);
  // the arms of a merged claim get only unpaused queues (PickSql).
  if (queue.empty()) {
    sql += "AND NOT EXISTS (SELECT 1 FROM warden.queue_pauses qp WHERE qp.queue = j.queue) ";
    if (exclude_blocked) sql += "AND NOT (j.queue = ANY($7::text[])) ";
  } else if (queue == "$2") {
    sql += "AND NOT EXISTS (SELECT 1 FROM warden.queue_pauses qp WHERE qp.queue = $2) ";
  }
  sql +=
      "AND (j.task = ANY($3::text[]) OR ($4::boolean AND j.command <> '')) "
      "AND ($4::boolean OR j.command = '') "
      "AND (j.avoid_until IS NULL OR j.avoid_until <= " + now + " OR j.avoid_node <> $6) "
      // `r.concurrency_key IS NOT NULL` says jobs_running_ckey's predicate
      // whole: the planner may hash this subquery once per claim (it does
      // when statistics put the running jobs at none), and then reads
      // that small index instead of every row of the table (20 ms a claim
      // on 50,000 jobs, growing with the table; issue 36).
      "AND (j.concurrency_key IS NULL OR NOT EXISTS (SELECT 1 FROM warden.jobs r WHERE "
      "r.state = 'running' AND r.concurrency_key IS NOT NULL AND "
      "r.concurrency_key = j.concurrency_key)) ";
  return sql;
}

constexpr const char* kClaimOrder = "ORDER BY j.priority DESC, j.run_at, j.id ";

// SafeToClaimAhead (core/claim_ahead.h) in SQL; the conformance test
// ClaimAheadTakesOnlyJobsALossCannotKill checks that both agree.
constexpr const char* kSafeToClaimAhead =
    "(j.delivery = 'at_most_once' OR (j.charged = 0 AND j.crashes = 0 AND j.max_crashes > 1 "
    "AND j.retry <> 'none' AND (j.retry = 'forever' OR j.max_attempts > 1)))";

}  // namespace

std::string PickSql(const ClaimParams& p, const std::string& now, const std::string& from,
                    bool capped_arms, bool exclude_blocked) {
  const std::string jobs = "FROM warden.jobs j" + from + " WHERE ";
  const std::string limit = "LIMIT $5::int FOR UPDATE OF j SKIP LOCKED";
  if (p.queues.size() < 2) {
    // One queue: the claim index (queue, priority, run_at, id) is walked in
    // order and the scan stops at the limit, however long the backlog.
    // (None means every queue: no worker claims so.)
    return std::string("SELECT j.id, j.concurrency_key, j.priority, j.run_at, ") +
           kSafeToClaimAhead + " AS safe, j.queue " + jobs +
           ClaimableWhere(now, p.queues.empty() ? "" : "$2", exclude_blocked) + kClaimOrder +
           limit;
  }
  // Several queues: the same walk in each, merged. `j.queue = ANY(...)`
  // cannot use the index's order, so it sorted every available job of those
  // queues on each claim. The rows an arm locks beyond the merged limit
  // stay locked (unclaimed) only until this transaction ends. A limited
  // queue's arm stops at its cap ($7, one per queue), so that its backlog
  // is never walked past the jobs it may give.
  const std::string queues =
      capped_arms ? "(SELECT name, cap FROM unnest($2::text[], $7::int[]) AS u(name, cap) WHERE "
                    "NOT EXISTS (SELECT 1 FROM warden.queue_pauses qp WHERE qp.queue = u.name)) "
                    "AS q(name, cap) "
                  : "(SELECT name FROM unnest($2::text[]) AS u(name) WHERE NOT EXISTS (SELECT 1 "
                    "FROM warden.queue_pauses qp WHERE qp.queue = u.name)) AS q(name) ";
  const std::string arm_limit =
      capped_arms ? "LIMIT least($5::int, q.cap) FOR UPDATE OF j SKIP LOCKED" : limit;
  return std::string(
             "SELECT m.id, m.concurrency_key, m.priority, m.run_at, m.safe, m.queue FROM ") +
         queues + "CROSS JOIN LATERAL (SELECT j.id, j.concurrency_key, j.priority, j.run_at, " +
         kSafeToClaimAhead + " AS safe, j.queue " + jobs + ClaimableWhere(now, "q.name") +
         kClaimOrder + arm_limit + ") m ORDER BY m.priority DESC, m.run_at, m.id LIMIT $5::int";
}

void AddPickParams(Params& params, const ClaimParams& p, std::optional<int64_t> now) {
  params.Add(now);
  if (p.queues.size() == 1) {
    params.Add(p.queues[0]);
  } else {
    params.AddArray(p.queues);
  }
  params.AddArray(p.tasks).Add(p.allow_commands).Add(p.limit).Add(p.node);
}

Result<std::vector<JobId>> PgStore::PickLocked(const ClaimParams& p, const ClaimFlow& flow,
                                               TimeMs now) {
  const bool exclude = p.queues.empty() && !flow.blocked.empty();
  bool capped = false;
  std::vector<int64_t> caps;  // one per queue of a merged claim
  if (p.queues.size() >= 2) {
    for (const std::string& q : p.queues) {
      auto cap = flow.caps.find(q);
      capped |= cap != flow.caps.end();
      caps.push_back(cap == flow.caps.end() ? p.limit : std::min<int64_t>(p.limit, cap->second));
    }
  }
  Params params;
  AddPickParams(params, p, std::optional<int64_t>(now));
  if (capped) params.AddArray(caps);
  if (exclude) {
    params.AddArray(std::vector<std::string>(flow.blocked.begin(), flow.blocked.end()));
  }
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(PickSql(p, "$1::bigint", "", capped, exclude),
                                              params));

  struct Pick {
    JobId id;
    std::optional<std::string> key;
  };
  std::vector<Pick> picks;  // in claim order
  std::vector<std::string> keys;
  std::unordered_set<std::string> seen;  // one job per concurrency key per batch
  std::map<std::string, int64_t> taken;  // of each limited queue
  // Rows past the free slots' share are taken only if safe to claim ahead.
  const int for_free_slots = p.limit - std::clamp(p.ahead, 0, p.limit);
  for (int i = 0; i < r.size(); ++i) {
    if (i >= for_free_slots && !r.Bool(i, 4)) continue;
    if (!flow.empty()) {
      const std::string queue = r.Text(i, 5);
      if (!FlowTakes(flow, queue, taken[queue], i >= for_free_slots)) continue;
      if (r.IsNull(i, 1) || !seen.count(r.Text(i, 1))) ++taken[queue];
    }
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
  // same claim, by priority), and no picked job has a concurrency key or
  // a limited queue (see ClaimInTransactionLocked). Then it claims nothing
  // and says so.
  // FOR SHARE orders the claim against a declaration of death, as there.
  Params params;
  AddPickParams(params, p, FakeNow());
  params.Add(p.worker).Add(static_cast<int64_t>(p.default_lease.count()));
  params.Add(std::clamp(p.ahead, 0, p.limit));
  WARDEN_ASSIGN_OR_RETURN(
      Rows r,
      conn_->Exec(
          std::string(
              "WITH w AS MATERIALIZED (SELECT coalesce($1::bigint, warden.now_ms()) AS now, "
              "node FROM warden.workers WHERE id = $7::bigint AND state = 'active' FOR SHARE), "
              "pick AS MATERIALIZED (") +
              PickSql(p, "w.now", ", w") +
              "), "
              // Rows past the free slots' share only if safe to claim ahead.
              "take AS MATERIALIZED (SELECT id FROM (SELECT id, safe, row_number() OVER "
              "(ORDER BY priority DESC, run_at, id) AS n FROM pick) o WHERE o.n <= $5::int - "
              "$9::int OR o.safe), "
              // Nor a job of a limited queue: those are claimed under the
              // lock of their queue's limits (ClaimInTransactionLocked).
              // With no limit set this is one probe of an empty table.
              "fast AS MATERIALIZED (SELECT NOT EXISTS (SELECT 1 FROM pick WHERE "
              "concurrency_key IS NOT NULL) AND NOT EXISTS (SELECT 1 FROM warden.jobs d, w "
              "WHERE d.state IN ('scheduled', 'retryable') AND d.run_at <= w.now) AND NOT "
              "EXISTS (SELECT 1 FROM pick, warden.queue_limits l WHERE l.queue = pick.queue) "
              // Nor a claim on a registered node that takes no work or has
              // a capacity: that is judged under the node's lock there too.
              "AND (NOT EXISTS (SELECT 1 FROM pick) OR NOT EXISTS (SELECT 1 FROM warden.nodes "
              "n, w WHERE n.name = w.node AND (NOT (n.present AND n.enabled) OR n.capacity IS "
              "NOT NULL))) AS ok), "
              "claimed AS (UPDATE warden.jobs j SET state = 'running', worker_id = "
              "$7::bigint, lease_token = j.lease_token + 1, attempt = j.attempt + 1, "
              "active_lease_ms = COALESCE(j.lease_ms, $8::bigint), lease_expires_at = w.now + "
              "COALESCE(j.lease_ms, $8::bigint), started_mark = false, cancel_requested = "
              "false, started_at = w.now FROM take, w, fast WHERE j.id = take.id AND fast.ok "
              "RETURNING " +
              kJobColumns +
              "), att AS (INSERT INTO warden.attempts (job_id, attempt, worker_id, "
              "lease_token, claimed_at) SELECT id, attempt, $7::bigint, lease_token, "
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
// `r.concurrency_key IS NOT NULL`: as in ClaimableWhere.
const std::string kClaimPickedSql =
    std::string(
        "WITH t AS MATERIALIZED (SELECT coalesce($3::bigint, warden.now_ms()) AS now), "
        "claimed AS (UPDATE warden.jobs j SET state = 'running', worker_id = $1::bigint, "
        "lease_token = lease_token + 1, attempt = attempt + 1, active_lease_ms = "
        "COALESCE(lease_ms, $2::bigint), lease_expires_at = t.now + COALESCE(lease_ms, "
        "$2::bigint), started_mark = false, cancel_requested = false, started_at = t.now FROM t "
        "WHERE j.id = ANY($4::bigint[]) AND (j.concurrency_key IS NULL OR NOT EXISTS (SELECT 1 "
        "FROM warden.jobs r WHERE r.state = 'running' AND r.concurrency_key IS NOT NULL AND "
        "r.concurrency_key = j.concurrency_key)) RETURNING ") +
    kJobColumns +
    "), att AS (INSERT INTO warden.attempts (job_id, attempt, worker_id, lease_token, "
    "claimed_at) SELECT id, attempt, $1::bigint, lease_token, started_at FROM claimed) "
    "SELECT * FROM claimed";

// The limits of the claim's queues ($2; every queue's for '{}') and, for
// each, its running jobs and its claims in the rate window ending at $1,
// after pruning the claims older than the window. Run after the limit rows
// are locked, so its snapshot holds every claim committed before.
const char* const kFlowSql =
    "WITH l AS (SELECT queue, concurrency, rate_count, rate_ms FROM warden.queue_limits WHERE "
    "$2::text[] = '{}' OR queue = ANY($2::text[])), "
    "pruned AS (DELETE FROM warden.queue_starts s USING l WHERE s.queue = l.queue AND "
    "l.rate_ms IS NOT NULL AND s.at <= $1::bigint - l.rate_ms) "
    "SELECT l.queue, l.concurrency, l.rate_count, l.rate_ms, "
    "CASE WHEN l.concurrency IS NULL THEN 0 ELSE (SELECT count(*) FROM warden.jobs j WHERE "
    "j.state = 'running' AND j.worker_id IS NOT NULL AND j.queue = l.queue) END, "
    "CASE WHEN l.rate_ms IS NULL THEN 0 ELSE (SELECT coalesce(sum(s.n), 0)::bigint FROM "
    "warden.queue_starts s WHERE s.queue = l.queue AND s.at > $1::bigint - l.rate_ms) END "
    "FROM l";

Result<ClaimFlow> PgStore::FlowLocked(const ClaimParams& p, TimeMs now) {
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(kFlowSql, Params().Add(now).AddArray(p.queues)));
  std::vector<FlowRow> rows;
  for (int i = 0; i < r.size(); ++i) {
    FlowRow row;
    row.queue = r.Text(i, 0);
    row.limits.concurrency = r.OptInt(i, 1);
    if (!r.IsNull(i, 2) && !r.IsNull(i, 3)) {
      row.limits.rate = RateLimit{r.Int(i, 2), Millis(r.Int(i, 3))};
    }
    row.running = r.Int(i, 4);
    row.recent_starts = r.Int(i, 5);
    rows.push_back(std::move(row));
  }
  return FlowOf(rows);
}

Result<std::vector<JobInfo>> PgStore::ClaimInTransactionLocked(const ClaimParams& claim) {
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  // FOR SHARE orders this claim against a concurrent declaration of death:
  // either the death waits and then recovers what we claimed, or we see the
  // worker dead and claim nothing. The same statement makes due scheduled
  // and retryable jobs available (as PromoteDueLocked does), so a claim
  // never waits for the sweeper; the pick, a later statement of this
  // transaction, sees them. One round trip for both.
  // It also locks the limit rows of the claim's queues (in queue order,
  // so claimers of overlapping queues cannot deadlock): claims of a
  // limited queue take turns, each counting in its next statement what
  // the one before it committed. Without limits: one empty probe a queue.
  WARDEN_ASSIGN_OR_RETURN(
      Rows w,
      conn_->Exec("WITH w AS MATERIALIZED (SELECT coalesce($2::bigint, warden.now_ms()) AS now "
                  "FROM warden.workers WHERE id = $1::bigint AND state = 'active' FOR SHARE), "
                  "promoted AS (UPDATE warden.jobs SET state = 'available' WHERE id IN (SELECT "
                  "id FROM warden.jobs, w WHERE state IN ('scheduled', 'retryable') AND run_at "
                  "<= w.now ORDER BY run_at LIMIT 10000 FOR UPDATE OF jobs SKIP LOCKED) "
                  "RETURNING 1), "
                  "lim AS MATERIALIZED (SELECT queue FROM warden.queue_limits WHERE "
                  "$3::text[] = '{}' OR queue = ANY($3::text[]) ORDER BY queue FOR UPDATE), "
                  // The worker's node row after the limits' (the count makes
                  // the order), so two claims never lock them crosswise.
                  "nd AS MATERIALIZED (SELECT n.name, n.present AND n.enabled AS open, "
                  "n.capacity FROM warden.nodes n WHERE n.name = (SELECT node FROM "
                  "warden.workers WHERE id = $1::bigint) AND (SELECT count(*) FROM lim) >= 0 FOR "
                  "UPDATE) "
                  "SELECT w.now, (SELECT count(*) FROM promoted), (SELECT count(*) FROM lim), "
                  "nd.name, nd.open, nd.capacity FROM w LEFT JOIN nd ON true",
                  Params().Add(claim.worker).Add(FakeNow()).AddArray(claim.queues)));
  if (w.empty()) {
    return FailedPrecondition("worker " + std::to_string(claim.worker) +
                              " is not active (declared dead, draining or stopped)");
  }
  const TimeMs now = w.Int(0, 0);
  const int64_t promoted = w.Int(0, 1);
  ClaimFlow flow;
  if (w.Int(0, 2) > 0) {
    WARDEN_ASSIGN_OR_RETURN(flow, FlowLocked(claim, now));
  }
  if (!w.IsNull(0, 3)) {
    const bool takes_work = w.Bool(0, 4);
    const std::optional<int64_t> capacity = w.OptInt(0, 5);
    int64_t running = 0;
    if (takes_work && capacity) {
      // After the lock: every claim of this node committed before is seen.
      WARDEN_ASSIGN_OR_RETURN(
          Rows c, conn_->Exec("SELECT count(*) FROM warden.workers w JOIN warden.jobs j ON "
                              "j.worker_id = w.id AND j.state = 'running' WHERE w.node = $1",
                              Params().Add(w.Text(0, 3))));
      running = c.Int(0, 0);
    }
    ApplyNode(true, takes_work, capacity, running, &flow);
  }
  // Paused queues are left out by the pick's SQL; Narrow takes out the
  // limited queues without room and caps a claim of one limited queue.
  ClaimParams p;
  std::vector<JobId> ids;
  if (Narrow(claim, {}, flow, &p)) {
    WARDEN_ASSIGN_OR_RETURN(ids, PickLocked(p, flow, now));
  }
  if (ids.empty()) {
    // Keep promotions (jobs for other workers' tasks); otherwise roll back.
    if (promoted > 0) WARDEN_RETURN_IF_ERROR(tx->Commit());
    return std::vector<JobInfo>{};
  }

  // The claim's times are read in the claim statement itself, not at the
  // start of the transaction: its snapshot may include a completion of the
  // same concurrency key that committed meanwhile, and the new attempt must
  // not appear to start before that one finished. (A rate window's claims
  // are so recorded no earlier than the `now` FlowLocked judged them at.)
  Params params;
  params.Add(p.worker)
      .Add(static_cast<int64_t>(p.default_lease.count()))
      .Add(fake_clock_ ? std::optional<int64_t>(now) : std::nullopt)
      .AddArray(ids);
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(kClaimPickedSql, params));
  std::vector<JobInfo> claimed;
  claimed.reserve(r.size());
  for (int i = 0; i < r.size(); ++i) claimed.push_back(JobFromRow(r, i));
  WARDEN_RETURN_IF_ERROR(RecordStartsLocked(flow, claimed));
  // In claim order, as the SQLite backend returns them.
  std::map<JobId, size_t> order;
  for (size_t i = 0; i < ids.size(); ++i) order[ids[i]] = i;
  std::sort(claimed.begin(), claimed.end(),
            [&](const JobInfo& a, const JobInfo& b) { return order[a.id] < order[b.id]; });
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return claimed;
}

Status PgStore::RecordStartsLocked(const ClaimFlow& flow, const std::vector<JobInfo>& claimed) {
  if (flow.rated.empty()) return Status::Ok();
  std::map<std::pair<std::string, TimeMs>, int64_t> started;
  for (const JobInfo& job : claimed) {
    if (flow.rated.count(job.queue)) ++started[{job.queue, job.started_at.value_or(0)}];
  }
  if (started.empty()) return Status::Ok();
  std::vector<std::string> queues;
  std::vector<int64_t> at, n;
  for (const auto& [key, count] : started) {
    queues.push_back(key.first);
    at.push_back(key.second);
    n.push_back(count);
  }
  return conn_
      ->Exec("INSERT INTO warden.queue_starts AS s (queue, at, n) SELECT * FROM "
             "unnest($1::text[], $2::bigint[], $3::bigint[]) ON CONFLICT (queue, at) DO UPDATE "
             "SET n = s.n + excluded.n",
             Params().AddArray(queues).AddArray(at).AddArray(n))
      .status();
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
