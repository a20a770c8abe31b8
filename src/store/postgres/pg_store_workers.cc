// PgStore: workers, leader lease, rescue and the other maintenance steps.
#include <string>

#include "warden/duration.h"
#include "warden/lists.h"
#include "store/postgres/pg_rows.h"
#include "store/postgres/pg_schema.h"
#include "store/postgres/pg_session.h"
#include "store/postgres/pg_store.h"

namespace warden::pg {

Result<WorkerId> PgStore::WorkerRegister(const WorkerRegistration& r) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  Params p;
  p.Add(r.name).Add(r.node).Add(r.boot_id).Add(r.pid_ns).Add(r.pid).Add(r.pid_start);
  p.Add(r.version).Add(JoinList(r.queues)).Add(JoinList(r.tasks)).Add(r.concurrency).Add(now);
  p.Add(r.allow_commands);
  auto rows = conn_->Exec(
      "INSERT INTO warden.workers (name, node, boot_id, pid_ns, pid, pid_start, version, "
      "queues, tasks, concurrency, state, started_at, last_heartbeat, allow_commands) VALUES "
      "($1, $2, $3, $4, $5::int, $6::bigint, $7, $8, $9, $10::int, 'active', $11::bigint, "
      "$11::bigint, $12::boolean) RETURNING id",
      p);
  if (!rows.has_value()) {
    if (rows.error().code() == StatusCode::kFailedPrecondition) {
      return FailedPrecondition("a live worker named '" + r.name + "' is already registered");
    }
    return rows.error();
  }
  return rows->Int(0, 0);
}

const char* const kHeartbeatSql =
    "WITH t AS (SELECT coalesce($1::bigint, warden.now_ms()) AS now), w AS (UPDATE "
    "warden.workers SET last_heartbeat = (SELECT now FROM t) WHERE id = $2::bigint AND state "
    "IN ('active', 'draining') RETURNING id), mine AS (SELECT j.id FROM warden.jobs j WHERE "
    "j.worker_id = $2::bigint AND j.state = 'running' AND EXISTS (SELECT 1 FROM w) ORDER BY "
    "j.id FOR UPDATE), held AS (UPDATE warden.jobs j SET lease_expires_at = (SELECT now FROM "
    "t) + j.active_lease_ms FROM mine WHERE j.id = mine.id AND j.state = 'running' RETURNING "
    "j.id, j.lease_token, j.cancel_requested) SELECT EXISTS (SELECT 1 FROM w), held.id, "
    "held.lease_token, held.cancel_requested FROM (SELECT 1) one LEFT JOIN held ON true";

Result<HeartbeatReply> PgStore::WorkerHeartbeat(WorkerId id) {
  MutexLock lock(mu_);
  // One statement, so one transaction the server runs to its end: a worker
  // frozen mid-heartbeat holds no lock. A dead worker's row is not updated,
  // so it extends nothing. Job rows are locked in id order, as
  // JobFinishMany and rescues lock them. Always one row: alive, then the
  // held jobs (NULL id when none).
  Params p;
  if (fake_clock_) p.Add(fake_clock_->NowMs()); else p.Null();
  p.Add(id);
  WARDEN_ASSIGN_OR_RETURN(
      Rows r,
      conn_->Exec(kHeartbeatSql, p));
  HeartbeatReply reply;
  reply.alive = !r.empty() && r.Bool(0, 0);
  for (int i = 0; i < r.size() && reply.alive; ++i) {
    if (r.IsNull(i, 1)) continue;
    reply.held.push_back(JobRef{r.Int(i, 1), r.Int(i, 2)});
    if (r.Bool(i, 3)) reply.cancel.push_back(r.Int(i, 1));
  }
  return reply;
}

Status PgStore::WorkerSetDraining(WorkerId id) {
  MutexLock lock(mu_);
  return conn_
      ->Exec("UPDATE warden.workers SET state = 'draining' WHERE id = $1::bigint AND state = "
             "'active'",
             Params().Add(id))
      .status();
}

Status PgStore::WorkerStop(WorkerId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_RETURN_IF_ERROR(conn_
                             ->Exec("UPDATE warden.workers SET state = 'stopped', stopped_at = "
                                    "$1::bigint WHERE id = $2::bigint AND state IN ('active', "
                                    "'draining')",
                                    Params().Add(now).Add(id))
                             .status());
  // Normally the worker released its jobs itself; anything left is lost.
  WARDEN_RETURN_IF_ERROR(RescueLocked(id, "worker stopped while holding the job", now).status());
  return tx->Commit();
}

Result<std::vector<WorkerInfo>> PgStore::WorkerList(bool live_only) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec(std::string("SELECT ") + kWorkerColumns +
                              " FROM warden.workers w WHERE NOT $1::boolean OR w.state IN "
                              "('active', 'draining') ORDER BY w.id",
                          Params().Add(live_only)));
  std::vector<WorkerInfo> out;
  for (int i = 0; i < r.size(); ++i) out.push_back(WorkerFromRow(r, i));
  return out;
}

Result<std::vector<WorkerLiveness>> PgStore::WorkerListLive(const std::string& name) {
  MutexLock lock(mu_);
  // session_lost: the worker took its session lock since the server last
  // started, and no session holds it now.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r,
      conn_->Exec("SELECT w.id, w.name, w.node, w.boot_id, w.pid_ns, w.pid, w.pid_start, "
                  "w.last_heartbeat, coalesce(w.lock_server_start = "
                  "extract(epoch FROM pg_postmaster_start_time())::text AND NOT EXISTS (SELECT "
                  "1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.database = (SELECT oid "
                  "FROM pg_database WHERE datname = current_database()) AND l.classid::bigint = "
                  "$2::bigint AND l.objid::bigint = w.id AND l.objsubid = 2 AND l.granted), "
                  "false), w.lock_epoch FROM warden.workers w WHERE w.state IN ('active', 'draining') AND "
                  "($1 = '' OR w.name = $1) ORDER BY w.id",
                  Params().Add(name).Add(kWorkerLockClass)));
  std::vector<WorkerLiveness> out;
  for (int i = 0; i < r.size(); ++i) {
    WorkerLiveness w{r.Int(i, 0), r.Text(i, 1), r.Text(i, 2), r.Text(i, 3), r.Text(i, 4),
                     static_cast<int>(r.Int(i, 5)), r.Int(i, 6), r.Int(i, 7)};
    w.session_lost = r.Bool(i, 8);
    w.session_epoch = r.Int(i, 9);
    out.push_back(std::move(w));
  }
  return out;
}

Result<RescueReport> PgStore::RescueLocked(WorkerId worker, const std::string& message,
                                           TimeMs now) {
  // Locked in id order (see JobFinishMany).
  //
  // Expired leases (worker 0): SKIP LOCKED. A row another transaction holds
  // is being finished right now (then nothing is left to rescue), or is held
  // by a frozen process's transaction, which the server ends within 1 s;
  // either way a later sweep sees it, and this one does not stall on it.
  //
  // A dead worker's jobs: wait for the lock. The row is most often held by
  // that worker's own last transaction (a completion cut short by the
  // kill), which the server aborts as soon as the connection drops; no later
  // sweep would look at it again (the worker is no longer live) and skipping
  // it would leave the job to its lease. lock_timeout (5 s) bounds the wait.
  auto held = worker > 0 ? conn_->Exec("SELECT id, lease_token FROM warden.jobs WHERE state = "
                                       "'running' AND worker_id = $1::bigint ORDER BY id FOR "
                                       "UPDATE",
                                       Params().Add(worker))
                         : conn_->Exec("SELECT id, lease_token FROM warden.jobs WHERE state = "
                                       "'running' AND worker_id IS NOT NULL AND "
                                       "lease_expires_at < $1::bigint ORDER BY id FOR UPDATE "
                                       "SKIP LOCKED",
                                       Params().Add(now));
  WARDEN_ASSIGN_OR_RETURN(Rows q, std::move(held));
  RescueReport report;
  for (int i = 0; i < q.size(); ++i) {
    JobOutcome o;
    o.ref = JobRef{q.Int(i, 0), q.Int(i, 1)};
    o.error.kind = ErrorKind::kLost;
    o.error.message = message;
    WARDEN_ASSIGN_OR_RETURN(bool ok, FailLocked(o, now));
    if (ok) ++report.rescued;
  }
  return report;
}

Result<RescueReport> PgStore::WorkerDeclareDead(WorkerId id, const std::string& reason) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  // A claim of this worker in flight holds its row FOR SHARE: declaring
  // now could miss what that claim takes, and a frozen claimer would stall
  // us. Skip it; the caller tries again (the server ends a frozen
  // transaction within 1 s).
  WARDEN_ASSIGN_OR_RETURN(
      Rows row, conn_->Exec("SELECT 1 FROM warden.workers WHERE id = $1::bigint FOR UPDATE "
                            "SKIP LOCKED",
                            Params().Add(id)));
  if (row.empty()) {
    WARDEN_ASSIGN_OR_RETURN(
        Rows exists, conn_->Exec("SELECT 1 FROM warden.workers WHERE id = $1::bigint",
                                 Params().Add(id)));
    if (!exists.empty()) {
      return Unavailable("worker " + std::to_string(id) +
                         " is in the middle of a transaction; try again");
    }
  }
  WARDEN_RETURN_IF_ERROR(conn_
                             ->Exec("UPDATE warden.workers SET state = 'dead', stopped_at = "
                                    "$1::bigint, death_reason = $2 WHERE id = $3::bigint AND "
                                    "state <> 'stopped'",
                                    Params().Add(now).Add(reason).Add(id))
                             .status());
  WARDEN_ASSIGN_OR_RETURN(
      RescueReport report,
      RescueLocked(id, "worker " + std::to_string(id) + " is dead: " + reason, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return report;
}

Result<std::unique_ptr<WorkerSession>> PgStore::OpenSession(WorkerId id, Millis lease) {
  return PgSession::Open(url_, id, lease);
}

void PgStore::NotifyWorkers() {
  MutexLock lock(mu_);
  (void)conn_->Exec("SELECT pg_notify('warden_jobs', '')");
}

Result<int> PgStore::WorkerMarkStale(Millis keepalive) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("UPDATE warden.workers SET state = 'dead', stopped_at = $1::bigint, "
                          "death_reason = 'no heartbeat for ' || $2 WHERE id IN (SELECT id "
                          "FROM warden.workers WHERE state IN ('active', 'draining') AND "
                          "last_heartbeat < $1::bigint - $3::bigint FOR UPDATE SKIP LOCKED)",
                          Params().Add(now).Add(FormatDuration(keepalive))
                              .Add(static_cast<int64_t>(keepalive.count()))));
  return r.affected();
}

Result<bool> PgStore::LeaderTryAcquire(const std::string& name, WorkerId holder, Millis ttl) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  // Taken over when expired or when its holder is no longer a live worker.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("INSERT INTO warden.leaders AS l (name, holder, expires_at) VALUES "
                          "($1, $2::bigint, $3::bigint) ON CONFLICT (name) DO UPDATE SET "
                          "holder = excluded.holder, expires_at = excluded.expires_at WHERE "
                          "l.holder = excluded.holder OR l.expires_at < $4::bigint OR l.holder "
                          "NOT IN (SELECT id FROM warden.workers WHERE state IN ('active', "
                          "'draining'))",
                          Params().Add(name).Add(holder).Add(now + ttl.count()).Add(now)));
  return r.affected() == 1;
}

Result<std::optional<WorkerId>> PgStore::LeaderHolder(const std::string& name) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("SELECT holder FROM warden.leaders WHERE name = $1", Params().Add(name)));
  if (r.empty()) return std::optional<WorkerId>();
  return std::optional<WorkerId>(r.Int(0, 0));
}

// `worker_id IS NOT NULL` lets it read jobs_running_worker (see schema 5).
const char* const kAnyLeaseExpiredSql =
    "SELECT 1 FROM warden.jobs WHERE state = 'running' AND worker_id IS NOT NULL AND "
    "lease_expires_at < $1::bigint LIMIT 1";

Result<RescueReport> PgStore::JobRescueExpired() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  // Look first: the leader sweeps several times a second.
  WARDEN_ASSIGN_OR_RETURN(
      Rows any, conn_->Exec(kAnyLeaseExpiredSql, Params().Add(now)));
  if (any.empty()) return RescueReport{};
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(
      RescueReport report, RescueLocked(0, "lease expired (worker silent)", now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return report;
}

Result<int> PgStore::JobExpire() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("UPDATE warden.jobs SET state = 'expired', finished_at = $1::bigint "
                          "WHERE id IN (SELECT id FROM warden.jobs WHERE start_deadline_at < "
                          "$1::bigint AND state IN ('scheduled', 'available', 'retryable') FOR "
                          "UPDATE SKIP LOCKED)",
                          Params().Add(now)));
  return r.affected();
}

Result<int> PgStore::JobPromote() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  return PromoteDueLocked(now);
}

Result<int> PgStore::Prune(Millis retention) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  const TimeMs cutoff = now - retention.count();
  // Small transactions, so pruning a large history never holds many locks.
  constexpr int kChunk = 5000;
  int pruned = 0;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(
        Rows r, conn_->Exec("WITH gone AS (DELETE FROM warden.jobs WHERE id IN (SELECT id FROM "
                            "warden.jobs WHERE finished_at < $1::bigint AND state IN "
                            "('succeeded', 'dead', 'cancelled', 'expired') LIMIT $2::int FOR "
                            "UPDATE SKIP LOCKED) RETURNING id), att AS (DELETE FROM "
                            "warden.attempts WHERE job_id IN (SELECT id FROM gone)) SELECT "
                            "count(*) FROM gone",
                            Params().Add(cutoff).Add(kChunk)));
    const int n = static_cast<int>(r.Int(0, 0));
    pruned += n;
    if (n < kChunk) break;
  }
  WARDEN_RETURN_IF_ERROR(conn_
                             ->Exec("DELETE FROM warden.workers WHERE stopped_at < $1::bigint "
                                    "AND state IN ('stopped', 'dead')",
                                    Params().Add(cutoff))
                             .status());
  WARDEN_RETURN_IF_ERROR(
      conn_->Exec("DELETE FROM warden.fenced_writes WHERE at < $1::bigint", Params().Add(cutoff))
          .status());
  return pruned;
}

Result<Stats> PgStore::GetStats() {
  MutexLock lock(mu_);
  Stats stats;
  WARDEN_ASSIGN_OR_RETURN(
      Rows jobs, conn_->Exec("SELECT state, count(*) FROM warden.jobs GROUP BY state ORDER BY "
                             "state"));
  for (int i = 0; i < jobs.size(); ++i) stats.jobs.emplace_back(jobs.Text(i, 0), jobs.Int(i, 1));
  WARDEN_ASSIGN_OR_RETURN(
      Rows workers, conn_->Exec("SELECT state, count(*) FROM warden.workers GROUP BY state "
                                "ORDER BY state"));
  for (int i = 0; i < workers.size(); ++i) {
    stats.workers.emplace_back(workers.Text(i, 0), workers.Int(i, 1));
  }
  WARDEN_ASSIGN_OR_RETURN(
      Rows n, conn_->Exec("SELECT (SELECT count(*) FROM warden.attempts WHERE outcome = 'lost'), "
                          "(SELECT count(*) FROM warden.fenced_writes), (SELECT count(*) FROM "
                          "warden.jobs WHERE last_error = 'crash_loop')"));
  stats.rescued = n.Int(0, 0);
  stats.fenced_writes = n.Int(0, 1);
  stats.crash_loops = n.Int(0, 2);
  return stats;
}

}  // namespace warden::pg
