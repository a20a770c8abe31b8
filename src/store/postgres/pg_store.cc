// PgStore: jobs. Workers and maintenance are in pg_store_workers.cc.
#include "store/postgres/pg_store.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/first_run.h"
#include "warden/text.h"
#include "core/operator_rules.h"
#include "core/retry.h"
#include "store/postgres/pg_rows.h"
#include "store/postgres/pg_schema.h"

namespace warden::pg {

Result<std::unique_ptr<Store>> PgStore::Open(const std::string& url, StoreOptions options) {
  auto conn = Conn::Connect(url);
  if (!conn.has_value()) return conn.error();
  std::unique_ptr<PgStore> store(
      new PgStore(url, std::move(conn).value(), options.database_clock));
  WARDEN_RETURN_IF_ERROR(store->Migrate().Annotate("cannot use the PostgreSQL database"));
  return std::unique_ptr<Store>(std::move(store));
}

Status PgStore::Migrate() {
  MutexLock lock(mu_);
  return pg::Migrate(*conn_);
}

Result<int> PgStore::SchemaVersion() {
  MutexLock lock(mu_);
  return ReadSchemaVersion(*conn_);
}

Result<TimeMs> PgStore::NowLocked() {
  if (fake_clock_) return fake_clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec("SELECT warden.now_ms()"));
  return r.Int(0, 0);
}

Result<TimeMs> PgStore::Now() {
  MutexLock lock(mu_);
  return NowLocked();
}

Status PgStore::CheckWritable() {
  MutexLock lock(mu_);
  // A write that changes nothing still needs a writable, reachable primary.
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  return conn_->Exec("UPDATE warden.leaders SET holder = holder WHERE false").status();
}

Result<std::vector<EnqueueResult>> PgStore::JobInsertMany(std::span<const JobSpec> specs) {
  // Jobs without a unique key go in one statement per chunk; each unique
  // key needs its own look-up first.
  constexpr size_t kChunk = 5000;
  MutexLock lock(mu_);
  const bool one_statement =
      specs.size() <= kChunk && std::all_of(specs.begin(), specs.end(), [](const JobSpec& s) {
        return s.unique_key.empty();
      });
  if (one_statement) {
    // Atomic on its own, and one round trip instead of four (BEGIN, the
    // time, INSERT, COMMIT): what a single enqueue costs before its commit.
    return InsertBatchLocked(specs, fake_clock_ ? std::optional<TimeMs>(fake_clock_->NowMs())
                                                : std::nullopt);
  }
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  std::vector<EnqueueResult> out(specs.size());
  std::vector<size_t> plain;
  auto flush = [&]() REQUIRES(mu_) -> Status {  // called under the lock, below
    if (plain.empty()) return Status::Ok();
    std::vector<JobSpec> chunk;
    chunk.reserve(plain.size());
    for (size_t k : plain) chunk.push_back(specs[k]);
    WARDEN_ASSIGN_OR_RETURN(auto ids, InsertBatchLocked(chunk, now));
    for (size_t k = 0; k < plain.size(); ++k) out[plain[k]] = ids[k];
    plain.clear();
    return Status::Ok();
  };
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i].unique_key.empty()) {
      WARDEN_ASSIGN_OR_RETURN(out[i], InsertUniqueLocked(specs[i], now));
      continue;
    }
    plain.push_back(i);
    if (plain.size() == kChunk) WARDEN_RETURN_IF_ERROR(flush());
  }
  WARDEN_RETURN_IF_ERROR(flush());
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return out;
}

namespace {

const char* const kInsertColumns =
    "queue, task, command, payload, priority, state, run_at, max_attempts, max_crashes, retry, "
    "delivery, timeout_ms, lease_ms, start_deadline_at, unique_key, concurrency_key, created_at";

std::optional<std::string> OptText(std::optional<int64_t> v) {
  if (!v) return std::nullopt;
  return std::to_string(*v);
}

std::optional<std::string> TextOrNull(const std::string& v) {
  if (v.empty()) return std::nullopt;
  return v;
}

}  // namespace

Result<std::vector<EnqueueResult>> PgStore::InsertBatchLocked(std::span<const JobSpec> specs,
                                                              std::optional<TimeMs> now) {
  // Times are offsets from the statement's own "now" (the given one, else
  // the server's), so the statement needs no transaction around it.
  std::vector<std::string> queue, task, command, payload, state, retry, delivery;
  std::vector<int64_t> priority, delay, max_attempts, max_crashes, timeout;
  std::vector<std::optional<std::string>> lease, deadline, ckey, at;
  for (const JobSpec& s : specs) {
    queue.push_back(s.queue);
    task.push_back(s.task);
    command.push_back(s.command);
    payload.push_back(JsonText(s.payload));
    priority.push_back(s.priority);
    state.push_back(s.delay.count() > 0 ? "scheduled" : "available");
    delay.push_back(s.delay.count());
    max_attempts.push_back(s.max_attempts);
    max_crashes.push_back(s.max_crashes);
    retry.push_back(RetryPolicyName(s.retry));
    delivery.push_back(DeliveryName(s.delivery));
    timeout.push_back(s.timeout.count());
    lease.push_back(s.lease ? OptText(s.lease->count()) : std::nullopt);
    // From the first run time: the SQL adds run_at (r.ra below).
    deadline.push_back(s.start_deadline ? OptText(s.start_deadline->count()) : std::nullopt);
    ckey.push_back(TextOrNull(s.concurrency_key));
    at.push_back(s.run_at ? OptText(*s.run_at) : std::nullopt);
  }
  Params p;
  p.AddArray(queue).AddArray(task).AddArray(command).AddArray(payload).AddArray(priority);
  p.AddArray(state).AddArray(delay).AddArray(max_attempts).AddArray(max_crashes);
  p.AddArray(retry).AddArray(delivery).AddArray(timeout).AddArray(lease).AddArray(deadline);
  p.AddArray(ckey).AddArray(at).Add(now);
  // Identity values are drawn in row order, so sorted ids match the input.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec(std::string("WITH n AS MATERIALIZED (SELECT coalesce($17::bigint, "
                                      "warden.now_ms()) AS now) INSERT INTO warden.jobs (") +
                              kInsertColumns +
                              // First run: an absolute time (a past one is now), else now +
                              // delay, as FirstRunAt (core/first_run.h), by this clock.
                              ") SELECT q, t, c, p::json, pr, CASE WHEN v.at IS NULL THEN st "
                              "WHEN r.ra > n.now THEN 'scheduled' ELSE 'available' END, r.ra, "
                              "ma, mc, re, de, tm, lm, r.ra + sd, NULL, ck, n.now FROM n, "
                              "unnest($1::text[], $2::text[], "
                              "$3::text[], $4::text[], $5::int[], $6::text[], $7::bigint[], "
                              "$8::int[], $9::int[], $10::text[], $11::text[], $12::bigint[], "
                              "$13::bigint[], $14::bigint[], $15::text[], $16::bigint[]) WITH "
                              "ORDINALITY AS v(q, t, c, p, pr, st, dl, ma, mc, re, de, tm, lm, "
                              "sd, ck, at, ord), LATERAL (SELECT CASE WHEN v.at IS NULL THEN "
                              "n.now + v.dl ELSE greatest(n.now, v.at) END AS ra) r "
                              "ORDER BY ord RETURNING id",
                          p));
  std::vector<JobId> ids;
  for (int i = 0; i < r.size(); ++i) ids.push_back(r.Int(i, 0));
  std::sort(ids.begin(), ids.end());
  if (ids.size() != specs.size()) return Internal("batch insert returned a wrong row count");
  std::vector<EnqueueResult> out;
  for (JobId id : ids) out.push_back(EnqueueResult{id, true});
  return out;
}

Result<EnqueueResult> PgStore::InsertUniqueLocked(const JobSpec& s, TimeMs now) {
  const char* const find =
      "SELECT id FROM warden.jobs WHERE unique_key = $1 AND state IN ('scheduled', "
      "'available', 'running', 'retryable')";
  WARDEN_ASSIGN_OR_RETURN(Rows found, conn_->Exec(find, Params().Add(s.unique_key)));
  if (!found.empty()) return EnqueueResult{found.Int(0, 0), false};
  const TimeMs at = FirstRunAt(s, now);
  Params p;
  p.Add(s.queue).Add(s.task).Add(s.command).Add(JsonText(s.payload)).Add(s.priority);
  p.Add(JobStateName(FirstState(s, now))).Add(at).Add(s.max_attempts);
  p.Add(s.max_crashes).Add(RetryPolicyName(s.retry)).Add(DeliveryName(s.delivery));
  p.Add(static_cast<int64_t>(s.timeout.count()));
  p.Add(s.lease ? std::optional<int64_t>(s.lease->count()) : std::nullopt);
  p.Add(s.start_deadline ? std::optional<int64_t>(at + s.start_deadline->count())
                         : std::nullopt);
  p.Add(s.unique_key).AddTextOrNull(s.concurrency_key).Add(now);
  // ON CONFLICT: another transaction may insert the same key meanwhile.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec(std::string("INSERT INTO warden.jobs (") + kInsertColumns +
                              ") VALUES ($1, $2, $3, $4::json, $5::int, $6, $7::bigint, "
                              "$8::int, $9::int, $10, $11, $12::bigint, $13::bigint, "
                              "$14::bigint, $15, $16, $17::bigint) ON CONFLICT (unique_key) "
                              "WHERE unique_key IS NOT NULL AND state IN ('scheduled', "
                              "'available', 'running', 'retryable') DO NOTHING RETURNING id",
                          p));
  if (!r.empty()) return EnqueueResult{r.Int(0, 0), true};
  WARDEN_ASSIGN_OR_RETURN(Rows again, conn_->Exec(find, Params().Add(s.unique_key)));
  if (again.empty()) return Aborted("unique key '" + s.unique_key + "' changed hands; retry");
  return EnqueueResult{again.Int(0, 0), false};
}

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
             "unnest($2::text[]) AS q(name) CROSS JOIN LATERAL (SELECT j.id, "
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

Status PgStore::LogFenced(const JobRef& ref, WorkerId worker, const std::string& what,
                          TimeMs now) {
  return conn_
      ->Exec("INSERT INTO warden.fenced_writes (job_id, lease_token, worker_id, at, what) "
             "VALUES ($1::bigint, $2::bigint, $3::bigint, $4::bigint, $5)",
             Params().Add(ref.id).Add(ref.lease_token).Add(worker).Add(now).Add(what))
      .status();
}

Result<bool> PgStore::FailLocked(const JobOutcome& o, TimeMs now) {
  WARDEN_ASSIGN_OR_RETURN(
      Rows q, conn_->Exec("SELECT delivery, started_mark, retry, charged, max_attempts, "
                          "crashes, max_crashes, attempt, cancel_requested FROM warden.jobs "
                          "WHERE id = $1::bigint AND lease_token = $2::bigint AND state = "
                          "'running' FOR UPDATE",
                          Params().Add(o.ref.id).Add(o.ref.lease_token)));
  if (q.empty()) return false;
  FailureInput in;
  in.kind = o.error.kind;
  in.delivery = ParseDelivery(q.Text(0, 0)).value_or(Delivery::kAtLeastOnce);
  in.started_mark = q.Bool(0, 1);
  in.retry = ParseRetryPolicy(q.Text(0, 2)).value_or(RetryPolicy::kDefault);
  in.charged = static_cast<int>(q.Int(0, 3));
  in.max_attempts = static_cast<int>(q.Int(0, 4));
  in.crashes = static_cast<int>(q.Int(0, 5));
  in.max_crashes = static_cast<int>(q.Int(0, 6));
  const int64_t attempt = q.Int(0, 7);
  // An operator's cancel wins over however the attempt ended.
  if (q.Bool(0, 8)) in.kind = ErrorKind::kCancelled;

  const FailureDecision d = DecideFailure(in, Jitter());
  const bool terminal = IsTerminal(d.next);
  Params p;
  p.Add(JobStateName(d.next)).Add(static_cast<int64_t>(d.delay.count())).Add(now);
  p.Add(d.charge ? 1 : 0).Add(d.count_crash ? 1 : 0).Add(ErrorKindName(d.kind));
  p.Add(terminal ? std::optional<int64_t>(now) : std::nullopt).Add(o.ref.id);
  p.Add(ErrorKindName(o.error.kind)).Add(o.error.message);
  p.Add(o.error.exit_code ? std::optional<int64_t>(*o.error.exit_code) : std::nullopt);
  p.Add(o.error.signal ? std::optional<int64_t>(*o.error.signal) : std::nullopt);
  p.AddTextOrNull(o.error.stderr_tail).Add(attempt).AddTextOrNull(o.error.stdout_tail);
  // A retry without backoff keeps its place in line (its old run_at), so a
  // rescued job runs next instead of behind the whole backlog. The attempt
  // keeps what really happened; the job keeps the verdict.
  WARDEN_RETURN_IF_ERROR(
      conn_
          ->Exec("WITH j AS (UPDATE warden.jobs SET state = $1, run_at = CASE WHEN "
                 "$2::bigint > 0 THEN $3::bigint + $2::bigint ELSE run_at END, charged = "
                 "charged + $4::int, crashes = crashes + $5::int, last_error = $6, finished_at "
                 "= $7::bigint, lease_expires_at = NULL, cancel_requested = false WHERE id = "
                 "$8::bigint) UPDATE warden.attempts SET outcome = $9, finished_at = "
                 "$3::bigint, error_message = $10, exit_code = $11::int, signal = $12::int, "
                 "stderr_tail = $13, stdout_tail = $15 WHERE job_id = $8::bigint AND "
                 "attempt = $14::int",
                 p)
          .status());
  return true;
}

// `note`: what the worker noticed about a successful attempt (NULL for
// almost all), kept in its stderr_tail as a failure's is.
const char* const kSucceedManySql =
    "WITH v AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $5::text[]) AS "
    "v(id, token, result, note)), done AS (UPDATE warden.jobs j SET state = 'succeeded', "
    "result = v.result::json, finished_at = $4::bigint, lease_expires_at = NULL FROM v WHERE "
    "j.id = v.id AND j.lease_token = v.token AND j.state = 'running' RETURNING j.id, "
    "j.lease_token, j.attempt), att AS (UPDATE warden.attempts a SET outcome = 'succeeded', "
    "finished_at = $4::bigint, stderr_tail = v.note FROM done JOIN v ON v.id = done.id AND "
    "v.token = done.lease_token WHERE a.job_id = done.id AND a.attempt = done.attempt) SELECT "
    "id, lease_token FROM done";

Result<std::vector<bool>> PgStore::JobFinishMany(WorkerId worker,
                                                 std::span<const JobOutcome> outcomes) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  // Lock the rows in id order first: a heartbeat or a rescue locking the
  // same worker's jobs does so in the same order, so none can deadlock. The
  // same round trip reads the time.
  std::vector<int64_t> all;
  for (const JobOutcome& o : outcomes) all.push_back(o.ref.id);
  WARDEN_ASSIGN_OR_RETURN(
      Rows locked,
      conn_->Exec("WITH l AS MATERIALIZED (SELECT id FROM warden.jobs WHERE id = "
                  "ANY($1::bigint[]) ORDER BY id FOR UPDATE) SELECT coalesce($2::bigint, "
                  "warden.now_ms()), (SELECT count(*) FROM l)",
                  Params().AddArray(all).Add(FakeNow())));
  const TimeMs now = locked.Int(0, 0);

  std::vector<bool> accepted(outcomes.size(), false);
  std::vector<int64_t> ids, tokens;
  std::vector<std::optional<std::string>> results, notes;
  for (const JobOutcome& o : outcomes) {
    if (!o.success) continue;
    ids.push_back(o.ref.id);
    tokens.push_back(o.ref.lease_token);
    results.push_back(o.result.is_null() ? std::nullopt
                                         : std::optional<std::string>(JsonText(o.result)));
    notes.push_back(o.note.empty() ? std::nullopt : std::optional<std::string>(o.note));
  }
  std::set<std::pair<JobId, int64_t>> done;
  if (!ids.empty()) {
    WARDEN_ASSIGN_OR_RETURN(
        Rows r, conn_->Exec(kSucceedManySql,
                            Params()
                                                .AddArray(ids)
                                                .AddArray(tokens)
                                                .AddArray(results)
                                                .Add(now)
                                                .AddArray(notes)));
    for (int i = 0; i < r.size(); ++i) done.emplace(r.Int(i, 0), r.Int(i, 1));
  }
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const JobOutcome& o = outcomes[i];
    if (o.success) {
      accepted[i] = done.count({o.ref.id, o.ref.lease_token}) > 0;
      if (!accepted[i]) {
        // A retry of a batch whose COMMIT reply was lost finds its own
        // completion already there: that is not a fenced write.
        WARDEN_ASSIGN_OR_RETURN(
            Rows s, conn_->Exec("SELECT 1 FROM warden.jobs WHERE id = $1::bigint AND "
                                "lease_token = $2::bigint AND state = 'succeeded'",
                                Params().Add(o.ref.id).Add(o.ref.lease_token)));
        accepted[i] = !s.empty();
        if (accepted[i]) continue;
      }
    } else {
      WARDEN_ASSIGN_OR_RETURN(accepted[i], FailLocked(o, now));
    }
    if (!accepted[i]) {
      WARDEN_RETURN_IF_ERROR(
          LogFenced(o.ref, worker, o.success ? "complete" : ErrorKindName(o.error.kind), now));
    }
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return accepted;
}

Result<bool> PgStore::JobCheckpoint(JobRef ref, const Json& checkpoint) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("UPDATE warden.jobs SET checkpoint = $1::json WHERE id = $2::bigint "
                          "AND lease_token = $3::bigint AND state = 'running'",
                          Params().Add(JsonText(checkpoint)).Add(ref.id).Add(ref.lease_token)));
  return r.affected() == 1;
}

Result<std::vector<AttemptInfo>> PgStore::AttemptsLocked(JobId id) {
  WARDEN_ASSIGN_OR_RETURN(
      Rows q, conn_->Exec("SELECT a.attempt, a.worker_id, a.lease_token, a.claimed_at, "
                          "a.started_at, a.finished_at, a.outcome, a.error_message, a.exit_code, "
                          "a.signal, a.stderr_tail, w.name, a.stdout_tail FROM warden.attempts "
                          "a LEFT JOIN warden.workers w ON w.id = a.worker_id WHERE a.job_id = "
                          "$1::bigint ORDER BY a.attempt",
                          Params().Add(id)));
  std::vector<AttemptInfo> out;
  for (int i = 0; i < q.size(); ++i) {
    out.push_back(AttemptFromRow(q, i));
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

// $1 the states (an empty array: any), $2 the queue, $3 the task (empty:
// any), $4 the limit.
const char* const kListedWhere =
    " FROM warden.jobs j WHERE (cardinality($1::text[]) = 0 OR j.state = ANY($1::text[])) "
    "AND ($2 = '' OR j.queue = $2) AND ($3 = '' OR j.task = $3)";

Result<std::vector<JobInfo>> PgStore::JobList(const JobFilter& f, int64_t* total) {
  MutexLock lock(mu_);
  std::vector<std::string> states;
  for (JobState s : f.states) states.push_back(JobStateName(s));
  Params p;
  p.AddArray(states).Add(f.queue).Add(f.task).Add(f.limit);
  // The page first, then the extras of its jobs only; the count, when
  // asked for, in the same statement (one snapshot).
  std::string sql = "SELECT page.*, " + JobExtraColumns("page");
  if (total) sql += std::string(", (SELECT count(*)") + kListedWhere + ")";
  sql += std::string(" FROM (SELECT ") + kJobColumns + kListedWhere +
         " ORDER BY j.id DESC LIMIT $4::int) page ORDER BY page.id DESC";
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(sql, p));
  std::vector<JobInfo> out;
  if (total) *total = 0;  // no row: nothing matches (the limit is at least 1)
  for (int i = 0; i < r.size(); ++i) {
    out.push_back(JobFromRow(r, i));
    JobExtrasFromRow(r, i, kJobColumnCount, &out.back());
    if (total) *total = r.Int(i, kJobColumnCount + kJobExtraColumnCount);
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

Status PgStore::JobRetry(JobId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(JobState state, LockJobStateLocked(id));
  WARDEN_RETURN_IF_ERROR(CheckRetryAllowed(id, state));
  Status s = conn_
                 ->Exec("UPDATE warden.jobs SET state = 'available', run_at = $1::bigint, "
                        "charged = 0, crashes = 0, finished_at = NULL, start_deadline_at = NULL "
                        "WHERE id = $2::bigint",
                        Params().Add(now).Add(id))
                 .status();
  if (s.code() == StatusCode::kFailedPrecondition) {
    return FailedPrecondition("job " + std::to_string(id) +
                              ": another live job holds its unique key");
  }
  WARDEN_RETURN_IF_ERROR(s);
  return tx->Commit();
}

Result<JobState> PgStore::JobCancel(JobId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(JobState state, LockJobStateLocked(id));
  WARDEN_RETURN_IF_ERROR(CheckCancelAllowed(id, state));
  if (state == JobState::kRunning) {
    WARDEN_RETURN_IF_ERROR(
        conn_->Exec("UPDATE warden.jobs SET cancel_requested = true WHERE id = $1::bigint",
                    Params().Add(id))
            .status());
  } else {
    WARDEN_RETURN_IF_ERROR(
        conn_
            ->Exec("UPDATE warden.jobs SET state = 'cancelled', finished_at = $1::bigint, "
                   "last_error = 'cancelled' WHERE id = $2::bigint",
                   Params().Add(now).Add(id))
            .status());
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return state == JobState::kRunning ? JobState::kRunning : JobState::kCancelled;
}

Result<int64_t> PgStore::JobCountUnfinished() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      // One count per index: jobs_state has no available or running jobs.
      Rows r, conn_->Exec("SELECT (SELECT count(*) FROM warden.jobs WHERE state IN "
                          "('scheduled', 'retryable')) + (SELECT count(*) FROM warden.jobs "
                          "WHERE state = 'available') + (SELECT count(*) FROM warden.jobs "
                          "WHERE state = 'running' AND worker_id IS NOT NULL)"));
  return r.Int(0, 0);
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

// One part per state, each in the terms of the partial index that holds it.
// $1: the queues, none for every queue.
const char* const kBacklogSql =
    "SELECT queue, task, command <> '', 'available', count(*), min(run_at) FROM warden.jobs "
    "WHERE state = 'available' AND (cardinality($1::text[]) = 0 OR queue = ANY($1::text[])) "
    "GROUP BY 1, 2, 3 UNION ALL SELECT queue, task, command <> '', state, count(*), "
    "min(run_at) FROM warden.jobs WHERE state IN ('scheduled', 'retryable') AND "
    "(cardinality($1::text[]) = 0 OR queue = ANY($1::text[])) GROUP BY 1, 2, 3, 4 UNION ALL "
    "SELECT queue, task, command <> '', 'running', count(*), min(run_at) FROM warden.jobs "
    "WHERE state = 'running' AND worker_id IS NOT NULL AND (cardinality($1::text[]) = 0 OR "
    "queue = ANY($1::text[])) GROUP BY 1, 2, 3";

Result<std::vector<BacklogGroup>> PgStore::JobBacklog(const std::vector<std::string>& queues) {
  MutexLock lock(mu_);
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
