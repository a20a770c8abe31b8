// SqliteStore: flow control (warden/flow.h): setting a queue's limits and
// what holds them now. The claim's side is in sqlite_store_claim.cc.
#include <string>
#include <vector>

#include "core/flow.h"
#include "store/sqlite/sqlite_store.h"

namespace warden::sqlite {
namespace {

// A queue_limits row's columns from `col`: concurrency, rate_count, rate_ms.
QueueLimits LimitsFromRow(const Stmt& q, int col) {
  QueueLimits l;
  if (!q.IsNull(col)) l.concurrency = q.Int(col);
  if (!q.IsNull(col + 1) && !q.IsNull(col + 2)) {
    l.rate = RateLimit{q.Int(col + 1), Millis(q.Int(col + 2))};
  }
  return l;
}

}  // namespace

Result<bool> SqliteStore::QueueSetLimits(const std::string& queue, const QueueLimits& limits,
                                         const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt old, db_->Prepare("SELECT concurrency, rate_count, rate_ms FROM queue_limits WHERE "
                             "queue = ?"));
  WARDEN_ASSIGN_OR_RETURN(bool had, old.Bind(1, queue).Step());
  const QueueLimits before = had ? LimitsFromRow(old, 0) : QueueLimits{};
  old.Reset();
  const bool changed = !(before == limits);
  if (limits.empty()) {
    WARDEN_ASSIGN_OR_RETURN(Stmt del, db_->Prepare("DELETE FROM queue_limits WHERE queue = ?"));
    WARDEN_RETURN_IF_ERROR(del.Bind(1, queue).Exec().status());
  } else if (changed) {
    WARDEN_ASSIGN_OR_RETURN(
        Stmt put, db_->Prepare("INSERT INTO queue_limits (queue, concurrency, rate_count, "
                               "rate_ms, set_at) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (queue) "
                               "DO UPDATE SET concurrency = ?2, rate_count = ?3, rate_ms = ?4, "
                               "set_at = ?5"));
    put.Bind(1, queue).Bind(2, limits.concurrency);
    put.Bind(3, limits.rate ? std::optional<int64_t>(limits.rate->count) : std::nullopt);
    put.Bind(4, limits.rate ? std::optional<int64_t>(limits.rate->per.count()) : std::nullopt);
    WARDEN_RETURN_IF_ERROR(put.Bind(5, now).Exec().status());
  }
  // The window's record goes with the rate; a new rate judges the claims
  // kept for the old one (those of its last window).
  if (!limits.rate) {
    WARDEN_ASSIGN_OR_RETURN(Stmt del, db_->Prepare("DELETE FROM queue_starts WHERE queue = ?"));
    WARDEN_RETURN_IF_ERROR(del.Bind(1, queue).Exec().status());
  }
  AuditEntry entry = audit;
  entry.count = changed ? 1 : 0;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  if (changed) NotifyWorkers();  // a raised or cleared limit may let jobs run
  return changed;
}

Result<std::optional<QueueFlow>> SqliteStore::QueueFlowOf(const std::string& queue) {
  MutexLock lock(mu_);
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt lim, db_->Prepare("SELECT concurrency, rate_count, rate_ms FROM queue_limits WHERE "
                             "queue = ?"));
  WARDEN_ASSIGN_OR_RETURN(bool row, lim.Bind(1, queue).Step());
  if (!row) return std::optional<QueueFlow>();
  QueueFlow f;
  f.limits = LimitsFromRow(lim, 0);
  lim.Reset();
  // Not on a worker's path: every running job of the queue is read.
  WARDEN_ASSIGN_OR_RETURN(
      Stmt run, db_->Prepare("SELECT id, worker_id FROM jobs WHERE state = 'running' AND queue = "
                             "? ORDER BY started_at, id"));
  run.Bind(1, queue);
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool more, run.Step());
    if (!more) break;
    ++f.running;
    if (static_cast<int>(f.holders.size()) < kFlowHoldersShown) {
      f.holders.emplace_back(run.Int(0), run.Int(1));
    }
  }
  if (f.limits.rate) {
    WARDEN_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("SELECT at, n FROM queue_starts WHERE queue = ? AND at > ? ORDER "
                              "BY at"));
    st.Bind(1, queue).Bind(2, now - f.limits.rate->per.count());
    std::vector<StartCount> window;
    while (true) {
      WARDEN_ASSIGN_OR_RETURN(bool more, st.Step());
      if (!more) break;
      window.push_back(StartCount{st.Int(0), st.Int(1)});
      f.recent_starts += st.Int(1);
    }
    f.next_start_at = NextStartAt(*f.limits.rate, window);
  }
  return std::optional<QueueFlow>(std::move(f));
}

}  // namespace warden::sqlite
