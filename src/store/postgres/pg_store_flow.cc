// PgStore: flow control (warden/flow.h): setting a queue's limits and what
// holds them now. The claim's side is in pg_store_claim.cc.
#include <string>
#include <vector>

#include "core/flow.h"
#include "store/postgres/pg_store.h"

namespace warden::pg {
namespace {

// A queue_limits row's columns from `col`: concurrency, rate_count, rate_ms.
QueueLimits LimitsFromRow(const Rows& r, int row, int col) {
  QueueLimits l;
  l.concurrency = r.OptInt(row, col);
  if (!r.IsNull(row, col + 1) && !r.IsNull(row, col + 2)) {
    l.rate = RateLimit{r.Int(row, col + 1), Millis(r.Int(row, col + 2))};
  }
  return l;
}

}  // namespace

Result<bool> PgStore::QueueSetLimits(const std::string& queue, const QueueLimits& limits,
                                     const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  // Locked as a claim locks it: a change waits for the claims under way.
  WARDEN_ASSIGN_OR_RETURN(
      Rows old, conn_->Exec("SELECT concurrency, rate_count, rate_ms FROM warden.queue_limits "
                            "WHERE queue = $1 FOR UPDATE",
                            Params().Add(queue)));
  const QueueLimits before = old.empty() ? QueueLimits{} : LimitsFromRow(old, 0, 0);
  const bool changed = !(before == limits);
  if (limits.empty()) {
    WARDEN_RETURN_IF_ERROR(
        conn_->Exec("DELETE FROM warden.queue_limits WHERE queue = $1", Params().Add(queue))
            .status());
  } else if (changed) {
    WARDEN_RETURN_IF_ERROR(
        conn_
            ->Exec("INSERT INTO warden.queue_limits (queue, concurrency, rate_count, rate_ms, "
                   "set_at) VALUES ($1, $2::bigint, $3::bigint, $4::bigint, $5::bigint) ON "
                   "CONFLICT (queue) DO UPDATE SET concurrency = excluded.concurrency, "
                   "rate_count = excluded.rate_count, rate_ms = excluded.rate_ms, set_at = "
                   "excluded.set_at",
                   Params()
                       .Add(queue)
                       .Add(limits.concurrency)
                       .Add(limits.rate ? std::optional<int64_t>(limits.rate->count)
                                        : std::nullopt)
                       .Add(limits.rate ? std::optional<int64_t>(limits.rate->per.count())
                                        : std::nullopt)
                       .Add(now))
            .status());
  }
  // The window's record goes with the rate; a new rate judges the claims
  // kept for the old one (those of its last window).
  if (!limits.rate) {
    WARDEN_RETURN_IF_ERROR(
        conn_->Exec("DELETE FROM warden.queue_starts WHERE queue = $1", Params().Add(queue))
            .status());
  }
  AuditEntry entry = audit;
  entry.count = changed ? 1 : 0;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  if (changed) {
    // Sent at the commit: a raised or cleared limit may let jobs run now.
    WARDEN_RETURN_IF_ERROR(conn_->Exec("SELECT pg_notify('warden_jobs', '')").status());
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return changed;
}

Result<std::optional<QueueFlow>> PgStore::QueueFlowOf(const std::string& queue) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  // One statement, so one snapshot: the limits, the running jobs and the
  // window agree. Not on a worker's path: every running job of the queue
  // is counted.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r,
      conn_->Exec(
          "WITH l AS (SELECT concurrency, rate_count, rate_ms FROM warden.queue_limits WHERE "
          "queue = $1), "
          "run AS (SELECT id, worker_id, started_at FROM warden.jobs WHERE state = 'running' AND "
          "worker_id IS NOT NULL AND queue = $1) "
          "SELECT l.concurrency, l.rate_count, l.rate_ms, (SELECT count(*) FROM run), "
          "(SELECT coalesce(json_agg(json_build_array(id, worker_id) ORDER BY started_at, id), "
          "'[]')::text FROM (SELECT * FROM run ORDER BY started_at, id LIMIT $3::int) h), "
          "(SELECT coalesce(json_agg(json_build_array(s.at, s.n) ORDER BY s.at), '[]')::text "
          "FROM warden.queue_starts s WHERE s.queue = $1 AND l.rate_ms IS NOT NULL AND s.at > "
          "$2::bigint - l.rate_ms) FROM l",
          Params().Add(queue).Add(now).Add(kFlowHoldersShown)));
  if (r.empty()) return std::optional<QueueFlow>();
  QueueFlow f;
  f.limits = LimitsFromRow(r, 0, 0);
  f.running = r.Int(0, 3);
  const Json holders = Json::parse(r.Text(0, 4), nullptr, /*allow_exceptions=*/false);
  const Json starts = Json::parse(r.Text(0, 5), nullptr, /*allow_exceptions=*/false);
  if (holders.is_array()) {
    for (const Json& h : holders) {
      f.holders.emplace_back(h[0].get<int64_t>(), h[1].get<int64_t>());
    }
  }
  if (f.limits.rate && starts.is_array()) {
    std::vector<StartCount> window;
    for (const Json& s : starts) {
      window.push_back(StartCount{s[0].get<int64_t>(), s[1].get<int64_t>()});
      f.recent_starts += window.back().n;
    }
    f.next_start_at = NextStartAt(*f.limits.rate, window);
  }
  return std::optional<QueueFlow>(std::move(f));
}

}  // namespace warden::pg
