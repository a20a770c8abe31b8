// PgStore: workers, leader lease, rescue and the other maintenance steps.
#include <fmt/core.h>

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
  p.Add(r.allow_commands).Add(r.host).Add(static_cast<int64_t>(r.keepalive.count()));
  auto rows = conn_->Exec(
      "INSERT INTO warden.workers (name, node, boot_id, pid_ns, pid, pid_start, version, "
      "queues, tasks, concurrency, state, started_at, last_heartbeat, allow_commands, host, "
      "keepalive_ms) VALUES ($1, $2, $3, $4, $5::int, $6::bigint, $7, $8, $9, $10::int, "
      "'active', $11::bigint, $11::bigint, $12::boolean, $13, $14::bigint) RETURNING id",
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
    "IN ('active', 'draining') RETURNING id, node), mine AS (SELECT j.id FROM warden.jobs j WHERE "
    "j.worker_id = $2::bigint AND j.state = 'running' AND EXISTS (SELECT 1 FROM w) ORDER BY "
    "j.id FOR UPDATE), held AS (UPDATE warden.jobs j SET lease_expires_at = (SELECT now FROM "
    "t) + j.active_lease_ms FROM mine WHERE j.id = mine.id AND j.state = 'running' RETURNING "
    "j.id, j.lease_token, j.cancel_requested) SELECT EXISTS (SELECT 1 FROM w), held.id, "
    "held.lease_token, held.cancel_requested, NOT EXISTS (SELECT 1 FROM warden.nodes n, w "
    "WHERE n.name = w.node AND NOT (n.present AND n.enabled)) FROM (SELECT 1) one LEFT JOIN "
    "held ON true";

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
  reply.node_takes_work = r.empty() || r.Bool(0, 4);
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
  WARDEN_RETURN_IF_ERROR(
      RescueLocked(id, "worker stopped while holding the job", LossCause::kWorkerStop, now)
          .status());
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
      conn_->Exec("SELECT w.id, w.name, CASE w.host WHEN '' THEN w.node ELSE w.host END, "
                  "w.boot_id, w.pid_ns, w.pid, w.pid_start, "
                  "w.last_heartbeat, coalesce(w.lock_server_start = "
                  "extract(epoch FROM pg_postmaster_start_time())::text AND NOT EXISTS (SELECT "
                  "1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.database = (SELECT oid "
                  "FROM pg_database WHERE datname = current_database()) AND l.classid::bigint = "
                  "$2::bigint AND l.objid::bigint = w.id AND l.objsubid = 2 AND l.granted), "
                  "false), w.lock_epoch FROM warden.workers w WHERE w.state IN ('active', "
                  "'draining') AND ($1 = '' OR w.name = $1) ORDER BY w.id",
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
                                           LossCause cause, TimeMs now) {
  // Locked in id order (see JobFinishMany), waiting for each lock: the row
  // is most often held by the dead worker's own last transaction (a
  // completion cut short by the kill), which the server aborts as soon as
  // the connection drops; no later sweep would look at it again (the worker
  // is no longer live) and skipping it would leave the job to its lease.
  // lock_timeout (5 s) bounds the wait.
  WARDEN_ASSIGN_OR_RETURN(
      Rows q, conn_->Exec("SELECT id, lease_token FROM warden.jobs WHERE state = 'running' AND "
                          "worker_id = $1::bigint ORDER BY id FOR UPDATE",
                          Params().Add(worker)));
  RescueReport report;
  for (int i = 0; i < q.size(); ++i) {
    JobOutcome o;
    o.ref = JobRef{q.Int(i, 0), q.Int(i, 1)};
    o.error.kind = ErrorKind::kLost;
    o.error.message = message;
    o.lost_by = cause;
    RescuedJob job;
    WARDEN_ASSIGN_OR_RETURN(bool ok, FailLocked(o, now, &job));
    if (ok) {
      ++report.rescued;
      report.jobs.push_back(std::move(job));
    }
  }
  return report;
}

Result<RescueReport> PgStore::WorkerDeclareDead(WorkerId id, const std::string& reason,
                                                LossCause cause, const AuditEntry* audit) {
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
  if (audit) {
    // An operator's release: each job it takes from the worker shows who.
    WARDEN_RETURN_IF_ERROR(
        conn_
            ->Exec(std::string("INSERT INTO warden.job_actions (job_id, at, action, actor, op_id, "
                               "fresh, from_state, finished_at, last_error, charged, "
                               "max_attempts, crashes, max_crashes) SELECT id, $1::bigint, "
                               "'release', $2, NULL, false, ") +
                       kJobActionCopied +
                       " FROM warden.jobs WHERE worker_id = $3::bigint AND state = 'running'",
                   Params().Add(now).Add(audit->actor).Add(id))
            .status());
  }
  WARDEN_ASSIGN_OR_RETURN(
      RescueReport report,
      RescueLocked(id, "worker " + std::to_string(id) + " is dead: " + reason, cause, now));
  if (audit) {
    AuditEntry entry = *audit;
    entry.count = report.rescued;
    WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  }
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

Result<int> PgStore::WorkerMarkSilent(std::span<const WorkerLiveness> silent,
                                      Millis silent_for) {
  if (silent.empty()) return 0;
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  std::vector<int64_t> ids, heartbeats;
  for (const WorkerLiveness& w : silent) {
    ids.push_back(w.id);
    heartbeats.push_back(w.last_heartbeat);
  }
  // SKIP LOCKED: a row held by a claim in flight is not silent.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("UPDATE warden.workers SET state = 'dead', stopped_at = $1::bigint, "
                          "death_reason = 'no heartbeat for ' || $2 WHERE id IN (SELECT w.id "
                          "FROM warden.workers w JOIN unnest($3::bigint[], $4::bigint[]) AS "
                          "s(id, hb) ON w.id = s.id AND w.last_heartbeat = s.hb WHERE w.state "
                          "IN ('active', 'draining') FOR UPDATE OF w SKIP LOCKED)",
                          Params()
                              .Add(now)
                              .Add(FormatDuration(silent_for))
                              .AddArray(ids)
                              .AddArray(heartbeats)));
  return r.affected();
}

const char* const kLeaderReadSql =
    "SELECT holder, expires_at, ttl_ms, EXISTS (SELECT 1 FROM warden.workers WHERE id = holder "
    "AND state IN ('active', 'draining')) FROM warden.leaders WHERE name = $1";

Result<std::optional<LeaderRow>> PgStore::LeaderRead(const std::string& name) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(kLeaderReadSql, Params().Add(name)));
  if (r.empty()) return std::optional<LeaderRow>();
  return std::optional<LeaderRow>(
      LeaderRow{r.Int(0, 0), r.Int(0, 1), Millis(r.Int(0, 2)), r.Bool(0, 3)});
}

Result<bool> PgStore::LeaderTryAcquire(const std::string& name, WorkerId holder, Millis ttl,
                                       const std::optional<LeaderRow>& silent) {
  MutexLock lock(mu_);
  Params p;
  p.Add(name).Add(holder).Add(ttl.count());
  if (fake_clock_) p.Add(fake_clock_->NowMs()); else p.Null();
  if (silent) p.Add(silent->holder).Add(silent->expires_at); else p.Null().Null();
  // Taken when free, already ours, held by a worker no longer live, or held
  // exactly as the caller judged silent.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("INSERT INTO warden.leaders AS l (name, holder, expires_at, ttl_ms) "
                          "VALUES ($1, $2::bigint, coalesce($4::bigint, warden.now_ms()) + "
                          "$3::bigint, $3::bigint) ON CONFLICT (name) DO UPDATE SET holder = "
                          "excluded.holder, expires_at = excluded.expires_at, ttl_ms = "
                          "excluded.ttl_ms WHERE l.holder = excluded.holder OR "
                          "(l.holder = $5::bigint AND l.expires_at = $6::bigint) OR l.holder "
                          "NOT IN (SELECT id FROM warden.workers WHERE state IN ('active', "
                          "'draining'))",
                          p));
  return r.affected() == 1;
}

// `worker_id IS NOT NULL` lets it read jobs_running_worker (see schema 5).
const char* const kJobLeasesSql =
    "SELECT j.id, j.lease_token, j.worker_id, j.lease_expires_at, j.active_lease_ms, "
    "w.last_heartbeat FROM warden.jobs j LEFT JOIN warden.workers w ON w.id = j.worker_id WHERE "
    "j.state = 'running' AND j.worker_id IS NOT NULL";

Result<std::vector<LeaseRow>> PgStore::JobLeases() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(kJobLeasesSql));
  std::vector<LeaseRow> out;
  out.reserve(r.size());
  for (int i = 0; i < r.size(); ++i) {
    LeaseRow l{JobRef{r.Int(i, 0), r.Int(i, 1)}, r.Int(i, 2), r.Int(i, 3), Millis(r.Int(i, 4)),
               std::nullopt};
    if (!r.IsNull(i, 5)) l.worker_heartbeat = r.Int(i, 5);
    out.push_back(l);
  }
  return out;
}

Result<RescueReport> PgStore::JobRescueSilent(std::span<const LeaseRow> silent) {
  RescueReport report;
  if (silent.empty()) return report;
  MutexLock lock(mu_);
  std::vector<int64_t> ids, tokens, expiries;
  for (const LeaseRow& l : silent) {
    ids.push_back(l.ref.id);
    tokens.push_back(l.ref.lease_token);
    expiries.push_back(l.expires_at);
  }
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  // Still as judged: same token, not renewed since. SKIP LOCKED: a row
  // another transaction holds is being finished or renewed right now, or is
  // held by a frozen process's transaction, which the server ends within
  // 1 s; either way a later pass sees it, and this one does not stall on it.
  // Locked in id order (see JobFinishMany).
  WARDEN_ASSIGN_OR_RETURN(
      Rows q, conn_->Exec("SELECT j.id, j.lease_token, j.active_lease_ms FROM warden.jobs j JOIN "
                          "unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS s(id, token, "
                          "expires_at) ON j.id = s.id AND j.lease_token = s.token AND "
                          "j.lease_expires_at = s.expires_at WHERE j.state = 'running' ORDER BY "
                          "j.id FOR UPDATE OF j SKIP LOCKED",
                          Params().AddArray(ids).AddArray(tokens).AddArray(expiries)));
  for (int i = 0; i < q.size(); ++i) {
    JobOutcome o;
    o.ref = JobRef{q.Int(i, 0), q.Int(i, 1)};
    o.error.kind = ErrorKind::kLost;
    o.error.message =
        "lease not renewed for " + FormatDuration(Millis(q.Int(i, 2))) + " (worker silent)";
    o.lost_by = LossCause::kLeaseExpiry;
    RescuedJob job;
    WARDEN_ASSIGN_OR_RETURN(bool ok, FailLocked(o, now, &job));
    if (ok) {
      ++report.rescued;
      report.jobs.push_back(std::move(job));
    }
  }
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
                            "warden.attempts WHERE job_id IN (SELECT id FROM gone)), acts AS "
                            "(DELETE FROM warden.job_actions WHERE job_id IN (SELECT id FROM "
                            "gone)) SELECT count(*) FROM gone",
                            Params().Add(cutoff).Add(kChunk)));
    const int n = static_cast<int>(r.Int(0, 0));
    pruned += n;
    if (n < kChunk) break;
  }
  // What the deleted rows counted stays in the totals (MetricTotals): each
  // statement deletes and adds in one.
  WARDEN_RETURN_IF_ERROR(
      conn_
          ->Exec("WITH gone AS (DELETE FROM warden.workers WHERE stopped_at < $1::bigint "
                 "AND state IN ('stopped', 'dead') RETURNING metrics) "
                 "INSERT INTO warden.metrics_retired (series, value) "
                 "SELECT m.key, sum((m.value)::double precision) FROM gone, "
                 "jsonb_each(gone.metrics) m WHERE jsonb_typeof(m.value) = 'number' "
                 "GROUP BY m.key ON CONFLICT (series) DO UPDATE SET "
                 "value = warden.metrics_retired.value + excluded.value",
                 Params().Add(cutoff))
          .status());
  WARDEN_RETURN_IF_ERROR(
      conn_
          ->Exec("WITH gone AS (DELETE FROM warden.fenced_writes WHERE at < $1::bigint "
                 "RETURNING 1) INSERT INTO warden.metrics_retired (series, value) "
                 "SELECT 'warden_fenced_writes_total', count(*) FROM gone "
                 "ON CONFLICT (series) DO UPDATE SET "
                 "value = warden.metrics_retired.value + excluded.value",
                 Params().Add(cutoff))
          .status());
  // As on SQLite: folded rows at 0 go (a reader adds the deltas to nothing).
  WARDEN_RETURN_IF_ERROR(conn_->Exec("DELETE FROM warden.job_counts WHERE n = 0").status());
  return pruned;
}

Result<Stats> PgStore::GetStats() {
  MutexLock lock(mu_);
  Stats stats;
  WARDEN_ASSIGN_OR_RETURN(stats.jobs, StateCountsLocked());
  WARDEN_ASSIGN_OR_RETURN(
      Rows workers, conn_->Exec("SELECT state, count(*) FROM warden.workers GROUP BY state "
                                "ORDER BY state"));
  for (int i = 0; i < workers.size(); ++i) {
    stats.workers.emplace_back(workers.Text(i, 0), workers.Int(i, 1));
  }
  WARDEN_ASSIGN_OR_RETURN(
      Rows n, conn_->Exec("SELECT l.n, l.jobs, (SELECT count(*) FROM warden.fenced_writes), "
                          "(SELECT count(*) FROM warden.jobs WHERE last_error = 'crash_loop') "
                          "FROM (SELECT count(*) AS n, count(DISTINCT job_id) AS jobs FROM "
                          "warden.attempts WHERE outcome = 'lost') l"));
  stats.rescued = n.Int(0, 0);
  stats.rescued_jobs = n.Int(0, 1);
  stats.fenced_writes = n.Int(0, 2);
  stats.crash_loops = n.Int(0, 3);
  return stats;
}

Status PgStore::WorkerPutMetrics(WorkerId id, const std::string& snapshot) {
  MutexLock lock(mu_);
  return conn_
      ->Exec("UPDATE warden.workers SET metrics = $1::jsonb WHERE id = $2::bigint",
             Params().Add(snapshot).Add(id))
      .status();
}

Status PgStore::MetricsAdd(const MetricSnapshot& deltas) {
  if (deltas.empty()) return Status::Ok();
  MutexLock lock(mu_);
  std::vector<std::string> series;
  std::vector<std::string> values;
  for (const auto& [s, v] : deltas) {
    series.push_back(s);
    values.push_back(fmt::format("{}", v));
  }
  return conn_
      ->Exec("INSERT INTO warden.metrics_retired (series, value) "
             "SELECT s, v::double precision FROM unnest($1::text[], $2::text[]) AS d(s, v) "
             "ON CONFLICT (series) DO UPDATE SET "
             "value = warden.metrics_retired.value + excluded.value",
             Params().AddArray(series).AddArray(values))
      .status();
}

Result<MetricSnapshot> PgStore::MetricTotals() {
  MutexLock lock(mu_);
  // The id sequence counts every id taken: also those of inserts that a
  // unique key turned away or that rolled back (docs/metrics.md).
  WARDEN_ASSIGN_OR_RETURN(
      Rows r,
      conn_->Exec("SELECT series, sum(value)::text FROM ("
                  "SELECT m.key AS series, (m.value)::double precision AS value "
                  "FROM warden.workers w, jsonb_each(w.metrics) m "
                  "WHERE jsonb_typeof(m.value) = 'number' "
                  "UNION ALL SELECT series, value FROM warden.metrics_retired "
                  "UNION ALL SELECT 'warden_fenced_writes_total', count(*) "
                  "FROM warden.fenced_writes "
                  "UNION ALL SELECT 'warden_jobs_enqueued_total', coalesce(pg_sequence_last_value("
                  "pg_get_serial_sequence('warden.jobs', 'id')::regclass), 0)"
                  ") t GROUP BY series"));
  MetricSnapshot out;
  for (int i = 0; i < r.size(); ++i) out[r.Text(i, 0)] = std::strtod(r.Text(i, 1).c_str(), nullptr);
  return out;
}

}  // namespace warden::pg
