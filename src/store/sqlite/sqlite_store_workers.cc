// SqliteStore: workers, leader lease, rescue and the other maintenance steps.
#include <string>

#include "warden/duration.h"
#include "store/sqlite/rows.h"
#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/wake_socket.h"

namespace warden::sqlite {

Result<WorkerId> SqliteStore::WorkerRegister(const WorkerRegistration& r) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt ins,
      db_->Prepare("INSERT INTO workers (name, node, boot_id, pid_ns, pid, pid_start, version, "
                   "queues, tasks, concurrency, state, started_at, last_heartbeat, "
                   "allow_commands, host, keepalive_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                   "'active', ?, ?, ?, ?, ?)"));
  ins.Bind(1, r.name)
      .Bind(2, r.node)
      .Bind(3, r.boot_id)
      .Bind(4, r.pid_ns)
      .Bind(5, r.pid)
      .Bind(6, r.pid_start)
      .Bind(7, r.version)
      .Bind(8, JoinList(r.queues))
      .Bind(9, JoinList(r.tasks))
      .Bind(10, r.concurrency)
      .Bind(11, now)
      .Bind(12, now)
      .Bind(13, r.allow_commands ? 1 : 0)
      .Bind(14, r.host)
      .Bind(15, static_cast<int64_t>(r.keepalive.count()));
  Status s = ins.Exec().status();
  if (s.code() == StatusCode::kFailedPrecondition) {
    return FailedPrecondition("a live worker named '" + r.name + "' is already registered");
  }
  WARDEN_RETURN_IF_ERROR(s);
  const WorkerId id = sqlite3_last_insert_rowid(db_->raw());
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return id;
}

Result<HeartbeatReply> SqliteStore::WorkerHeartbeat(WorkerId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  HeartbeatReply reply;
  // Whether its node takes work comes back with the beat: a node the
  // registry does not name does.
  WARDEN_ASSIGN_OR_RETURN(
      Stmt w, db_->Prepare("UPDATE workers SET last_heartbeat = ? WHERE id = ? AND state IN "
                           "('active', 'draining') RETURNING coalesce((SELECT present AND "
                           "enabled FROM nodes WHERE name = workers.node), 1)"));
  WARDEN_ASSIGN_OR_RETURN(bool beat, w.Bind(1, now).Bind(2, id).Step());
  if (!beat) {
    w.Reset();
    reply.alive = false;
    return reply;  // rolled back: a dead worker extends nothing
  }
  reply.node_takes_work = w.Bool(0);
  w.Reset();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt j, db_->Prepare("UPDATE jobs SET lease_expires_at = ? + active_lease_ms "
                           "WHERE worker_id = ? AND state = 'running' "
                           "RETURNING id, lease_token, cancel_requested"));
  j.Bind(1, now).Bind(2, id);
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, j.Step());
    if (!row) break;
    reply.held.push_back(JobRef{j.Int(0), j.Int(1)});
    if (j.Int(2) != 0) reply.cancel.push_back(j.Int(0));
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return reply;
}

Status SqliteStore::WorkerSetDraining(WorkerId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd,
      db_->Prepare("UPDATE workers SET state = 'draining' WHERE id = ? AND state = 'active'"));
  return upd.Bind(1, id).Exec().status();
}

Status SqliteStore::WorkerStop(WorkerId id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE workers SET state = 'stopped', stopped_at = ? WHERE id = ? "
                             "AND state IN ('active', 'draining')"));
  WARDEN_RETURN_IF_ERROR(upd.Bind(1, now).Bind(2, id).Exec().status());
  // Normally the worker released its jobs itself; anything left is lost.
  WARDEN_RETURN_IF_ERROR(
      RescueLocked("worker_id = ?", id, "worker stopped while holding the job",
                   LossCause::kWorkerStop, now)
          .status());
  return tx->Commit();
}

Result<std::vector<WorkerInfo>> SqliteStore::WorkerList(bool live_only) {
  MutexLock lock(mu_);
  std::string sql = std::string("SELECT ") + kWorkerColumns + " FROM workers w";
  if (live_only) sql += " WHERE w.state IN ('active', 'draining')";
  sql += " ORDER BY w.id";
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(sql));
  std::vector<WorkerInfo> out;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(WorkerFromRow(q));
  }
  return out;
}

Result<std::vector<WorkerLiveness>> SqliteStore::WorkerListLive(const std::string& name) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT id, name, CASE host WHEN '' THEN node ELSE host END, "
                           "boot_id, pid_ns, pid, pid_start, "
                           "last_heartbeat FROM workers WHERE state IN ('active', 'draining') "
                           "AND (?1 = '' OR name = ?1)"));
  q.Bind(1, name);
  std::vector<WorkerLiveness> out;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(WorkerLiveness{q.Int(0), q.Text(1), q.Text(2), q.Text(3), q.Text(4),
                                 static_cast<int>(q.Int(5)), q.Int(6), q.Int(7)});
  }
  return out;
}

Result<RescueReport> SqliteStore::RescueLocked(const std::string& where, int64_t arg,
                                               const std::string& message, LossCause cause,
                                               TimeMs now) {
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT id, lease_token, worker_id FROM jobs INDEXED BY "
                           "jobs_running_worker WHERE state = 'running' AND " + where));
  q.Bind(1, arg);
  struct Victim {
    JobRef ref;
    WorkerId worker;
  };
  std::vector<Victim> victims;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    victims.push_back({JobRef{q.Int(0), q.Int(1)}, q.Int(2)});
  }
  RescueReport report;
  for (const Victim& v : victims) {
    JobOutcome o;
    o.ref = v.ref;
    o.error.kind = ErrorKind::kLost;
    o.error.message = message;
    o.lost_by = cause;
    RescuedJob job;
    WARDEN_ASSIGN_OR_RETURN(bool ok, FailLocked(v.worker, o, now, &job));
    if (ok) {
      ++report.rescued;
      report.jobs.push_back(std::move(job));
    }
  }
  return report;
}

Result<RescueReport> SqliteStore::WorkerDeclareDead(WorkerId id, const std::string& reason,
                                                    LossCause cause, const AuditEntry* audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE workers SET state = 'dead', stopped_at = ?, "
                             "death_reason = ? WHERE id = ? AND state <> 'stopped'"));
  WARDEN_RETURN_IF_ERROR(upd.Bind(1, now).Bind(2, reason).Bind(3, id).Exec().status());
  if (audit) {
    // An operator's release: each job it takes from the worker shows who.
    WARDEN_ASSIGN_OR_RETURN(
        Stmt ins, db_->Prepare(std::string("INSERT INTO job_actions (job_id, at, action, actor, "
                                           "op_id, fresh, from_state, finished_at, last_error, "
                                           "charged, max_attempts, crashes, max_crashes) "
                                           "SELECT id, ?, 'release', ?, NULL, 0, ") +
                               kJobActionCopied +
                               " FROM jobs WHERE worker_id = ? AND state = 'running'"));
    WARDEN_RETURN_IF_ERROR(ins.Bind(1, now).Bind(2, audit->actor).Bind(3, id).Exec().status());
  }
  WARDEN_ASSIGN_OR_RETURN(
      RescueReport report,
      RescueLocked("worker_id = ?", id,
                   "worker " + std::to_string(id) + " is dead: " + reason, cause, now));
  if (audit) {
    AuditEntry entry = *audit;
    entry.count = report.rescued;
    WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return report;
}

namespace {

// Wake-ups only: on one host, deaths are proven from the process itself.
class SqliteSession final : public WorkerSession {
 public:
  int fd() override { return listener_.fd(); }
  Result<bool> Drain() override { return listener_.Drain(); }
  WakeListener listener_;
};

}  // namespace

Result<std::unique_ptr<WorkerSession>> SqliteStore::OpenSession(WorkerId id, Millis lease) {
  (void)lease;
  auto session = std::make_unique<SqliteSession>();
  WARDEN_RETURN_IF_ERROR(session->listener_.Bind(wake_dir_, std::to_string(id)));
  return std::unique_ptr<WorkerSession>(std::move(session));
}

void SqliteStore::NotifyWorkers() { warden::NotifyWorkers(wake_dir_); }

Result<int> SqliteStore::WorkerMarkSilent(std::span<const WorkerLiveness> silent,
                                          Millis silent_for) {
  if (silent.empty()) return 0;
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE workers SET state = 'dead', stopped_at = ?, death_reason = "
                             "'no heartbeat for ' || ? WHERE id = ? AND last_heartbeat = ? AND "
                             "state IN ('active', 'draining')"));
  int marked = 0;
  for (const WorkerLiveness& w : silent) {
    WARDEN_ASSIGN_OR_RETURN(int n, upd.Bind(1, now)
                                       .Bind(2, FormatDuration(silent_for))
                                       .Bind(3, w.id)
                                       .Bind(4, w.last_heartbeat)
                                       .Exec());
    // Bound again without a reset, the statement kept the first worker's
    // values (SQLite refuses to bind a stepped statement, and steps a done
    // one again as it was): only the first silent worker of a batch was
    // ever marked.
    upd.Reset();
    marked += n;
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return marked;
}

Result<std::optional<LeaderRow>> SqliteStore::LeaderReadLocked(const std::string& name) {
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT holder, expires_at, ttl_ms, holder IN (SELECT id FROM workers "
                           "WHERE state IN ('active', 'draining')) FROM leaders WHERE name = ?"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Bind(1, name).Step());
  std::optional<LeaderRow> out;
  if (row) out = LeaderRow{q.Int(0), q.Int(1), Millis(q.Int(2)), q.Int(3) != 0};
  q.Reset();
  return out;
}

Result<std::optional<LeaderRow>> SqliteStore::LeaderRead(const std::string& name) {
  MutexLock lock(mu_);
  return LeaderReadLocked(name);
}

Result<bool> SqliteStore::LeaderTryAcquire(const std::string& name, WorkerId holder,
                                           Millis ttl, const std::optional<LeaderRow>& silent) {
  MutexLock lock(mu_);
  // Followers ask every sweep; only a possible takeover needs the write lock.
  auto possible = [&](const std::optional<LeaderRow>& row) {
    return !row || row->holder == holder || !row->holder_live ||
           (silent && silent->holder == row->holder && silent->expires_at == row->expires_at);
  };
  WARDEN_ASSIGN_OR_RETURN(auto seen, LeaderReadLocked(name));
  if (!possible(seen)) return false;
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  WARDEN_ASSIGN_OR_RETURN(seen, LeaderReadLocked(name));
  if (!possible(seen)) return false;
  WARDEN_ASSIGN_OR_RETURN(
      Stmt up, db_->Prepare("INSERT INTO leaders (name, holder, expires_at, ttl_ms) VALUES "
                            "(?1, ?2, ?3, ?4) ON CONFLICT (name) DO UPDATE SET holder = "
                            "excluded.holder, expires_at = excluded.expires_at, ttl_ms = "
                            "excluded.ttl_ms"));
  WARDEN_RETURN_IF_ERROR(up.Bind(1, name)
                             .Bind(2, holder)
                             .Bind(3, clock_->NowMs() + ttl.count())
                             .Bind(4, static_cast<int64_t>(ttl.count()))
                             .Exec()
                             .status());
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return true;
}

// jobs_running_worker holds every running job: as many as the live
// workers' slots at most.
Result<std::vector<LeaseRow>> SqliteStore::JobLeases() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT j.id, j.lease_token, j.worker_id, j.lease_expires_at, "
                           "j.active_lease_ms, w.last_heartbeat FROM jobs j INDEXED BY "
                           "jobs_running_worker LEFT JOIN workers w ON w.id = j.worker_id "
                           "WHERE j.state = 'running'"));
  std::vector<LeaseRow> out;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(LeaseRow{JobRef{q.Int(0), q.Int(1)}, q.Int(2), q.Int(3), Millis(q.Int(4)),
                           q.OptInt(5)});
  }
  return out;
}

Result<RescueReport> SqliteStore::JobRescueSilent(std::span<const LeaseRow> silent) {
  RescueReport report;
  if (silent.empty()) return report;
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt still, db_->Prepare("SELECT 1 FROM jobs WHERE id = ? AND lease_token = ? AND "
                               "lease_expires_at = ? AND state = 'running'"));
  for (const LeaseRow& l : silent) {
    WARDEN_ASSIGN_OR_RETURN(
        bool as_seen, still.Bind(1, l.ref.id).Bind(2, l.ref.lease_token).Bind(3, l.expires_at)
                          .Step());
    still.Reset();
    if (!as_seen) continue;  // renewed or finished since it was judged
    JobOutcome o;
    o.ref = l.ref;
    o.error.kind = ErrorKind::kLost;
    o.error.message = "lease not renewed for " + FormatDuration(l.length) + " (worker silent)";
    o.lost_by = LossCause::kLeaseExpiry;
    RescuedJob job;
    WARDEN_ASSIGN_OR_RETURN(bool ok, FailLocked(l.worker, o, now, &job));
    if (ok) {
      ++report.rescued;
      report.jobs.push_back(std::move(job));
    }
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return report;
}

Result<int> SqliteStore::JobExpire() {
  MutexLock lock(mu_);
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      bool any, ExistsLocked("SELECT 1 FROM jobs WHERE start_deadline_at < ? AND state IN "
                             "('scheduled', 'available', 'retryable')",
                             now));
  if (!any) return 0;
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  WARDEN_RETURN_IF_ERROR(CountSelected(
      *db_,
      "SELECT " WARDEN_GROUP_COLUMNS ", state, count(*) FROM jobs WHERE start_deadline_at < "
      "?1 AND state IN ('scheduled', 'available', 'retryable') GROUP BY 1, 2, 3, 4",
      JobState::kExpired, [&](Stmt& q) { q.Bind(1, now); }));
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE jobs SET state = 'expired', finished_at = ?1 WHERE "
                             "start_deadline_at < ?1 AND state IN ('scheduled', 'available', "
                             "'retryable')"));
  WARDEN_ASSIGN_OR_RETURN(int expired, upd.Bind(1, now).Exec());
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return expired;
}

Result<int> SqliteStore::JobPromote() {
  MutexLock lock(mu_);
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(bool any, AnyDueLocked(now));
  if (!any) return 0;
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));  // the counts with it
  WARDEN_ASSIGN_OR_RETURN(int promoted, PromoteDueLocked(now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return promoted;
}

Result<int> SqliteStore::Prune(Millis retention) {
  MutexLock lock(mu_);
  const TimeMs cutoff = clock_->NowMs() - retention.count();
  // Small transactions: a long one would hold the write lock past the
  // workers' busy timeout, and their heartbeats with it.
  constexpr int kChunk = 500;
  int pruned = 0;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
    WARDEN_RETURN_IF_ERROR(db_->ExecScript("CREATE TEMP TABLE IF NOT EXISTS prune_ids "
                                           "(id INTEGER PRIMARY KEY); DELETE FROM prune_ids"));
    WARDEN_ASSIGN_OR_RETURN(
        Stmt pick, db_->Prepare("INSERT INTO prune_ids SELECT id FROM jobs WHERE finished_at < ? "
                                "AND state IN ('succeeded', 'dead', 'cancelled', 'expired') "
                                "LIMIT ?"));
    WARDEN_ASSIGN_OR_RETURN(int n, pick.Bind(1, cutoff).Bind(2, kChunk).Exec());
    if (n == 0) break;
    WARDEN_RETURN_IF_ERROR(CountSelected(
        *db_,
        "SELECT " WARDEN_GROUP_COLUMNS ", state, count(*) FROM jobs WHERE id IN (SELECT id "
        "FROM prune_ids) GROUP BY 1, 2, 3, 4",
        std::nullopt, [](Stmt&) {}));
    WARDEN_RETURN_IF_ERROR(db_->ExecScript(
        "DELETE FROM attempts WHERE job_id IN (SELECT id FROM prune_ids); "
        "DELETE FROM job_actions WHERE job_id IN (SELECT id FROM prune_ids); "
        "DELETE FROM jobs WHERE id IN (SELECT id FROM prune_ids)"));
    WARDEN_RETURN_IF_ERROR(tx->Commit());
    pruned += n;
    if (n < kChunk) break;
  }
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  // What the rows about to go counted stays in the totals (MetricTotals).
  WARDEN_ASSIGN_OR_RETURN(
      Stmt fold_workers,
      db_->Prepare("INSERT INTO metrics_retired (series, value) "
                   "SELECT m.key, sum(m.value) FROM workers w, json_each(w.metrics) m "
                   "WHERE w.stopped_at < ? AND w.state IN ('stopped', 'dead') "
                   "AND json_valid(w.metrics) AND m.type IN ('integer', 'real') GROUP BY m.key "
                   "ON CONFLICT (series) DO UPDATE SET value = value + excluded.value"));
  WARDEN_RETURN_IF_ERROR(fold_workers.Bind(1, cutoff).Exec().status());
  WARDEN_ASSIGN_OR_RETURN(
      Stmt workers, db_->Prepare("DELETE FROM workers WHERE stopped_at < ? AND state IN "
                                 "('stopped', 'dead')"));
  WARDEN_RETURN_IF_ERROR(workers.Bind(1, cutoff).Exec().status());
  WARDEN_ASSIGN_OR_RETURN(
      Stmt fold_fenced,
      db_->Prepare("INSERT INTO metrics_retired (series, value) "
                   "SELECT 'warden_fenced_writes_total', count(*) FROM fenced_writes WHERE at < ? "
                   "ON CONFLICT (series) DO UPDATE SET value = value + excluded.value"));
  WARDEN_RETURN_IF_ERROR(fold_fenced.Bind(1, cutoff).Exec().status());
  WARDEN_ASSIGN_OR_RETURN(Stmt fenced, db_->Prepare("DELETE FROM fenced_writes WHERE at < ?"));
  WARDEN_RETURN_IF_ERROR(fenced.Bind(1, cutoff).Exec().status());
  // A group whose jobs are all gone (a task no longer enqueued) leaves its
  // rows at 0: they go with the history, so job_counts stays as small as
  // the groups in use (schema 11 keys it by task).
  WARDEN_RETURN_IF_ERROR(db_->ExecScript("DELETE FROM job_counts WHERE n = 0"));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return pruned;
}

Result<Stats> SqliteStore::GetStats() {
  MutexLock lock(mu_);
  Stats stats;
  // The lambdas run here, under the lock (the analysis cannot see that).
  auto counts = [&](const std::string& sql, std::vector<std::pair<std::string, int64_t>>& out)
                    REQUIRES(mu_) -> Status {
    WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(sql));
    while (true) {
      WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) break;
      out.emplace_back(q.Text(0), q.Int(1));
    }
    return Status::Ok();
  };
  auto scalar = [&](const std::string& sql) REQUIRES(mu_) -> Result<int64_t> {
    WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(sql));
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    const int64_t v = row ? q.Int(0) : 0;
    q.Reset();
    return v;
  };
  WARDEN_RETURN_IF_ERROR(
      counts(kJobCountsSql, stats.jobs));
  WARDEN_RETURN_IF_ERROR(counts(
      "SELECT state, count(*) FROM workers GROUP BY state ORDER BY state", stats.workers));
  {
    // The rescued attempts and their jobs in one read of the lost ones.
    WARDEN_ASSIGN_OR_RETURN(
        Stmt q, db_->Prepare("SELECT count(*), count(DISTINCT job_id) FROM attempts INDEXED BY "
                             "attempts_lost WHERE outcome = 'lost'"));
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    stats.rescued = row ? q.Int(0) : 0;
    stats.rescued_jobs = row ? q.Int(1) : 0;
    q.Reset();
  }
  WARDEN_ASSIGN_OR_RETURN(stats.fenced_writes, scalar("SELECT count(*) FROM fenced_writes"));
  WARDEN_ASSIGN_OR_RETURN(
      stats.crash_loops,
      scalar("SELECT count(*) FROM jobs INDEXED BY jobs_crash_loop WHERE last_error = "
             "'crash_loop'"));
  return stats;
}

Status SqliteStore::WorkerPutMetrics(WorkerId id, const std::string& snapshot) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("UPDATE workers SET metrics = ? WHERE id = ?"));
  return q.Bind(1, snapshot).Bind(2, id).Exec().status();
}

Status SqliteStore::MetricsAdd(const MetricSnapshot& deltas) {
  if (deltas.empty()) return Status::Ok();
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("INSERT INTO metrics_retired (series, value) VALUES (?, ?) "
                           "ON CONFLICT (series) DO UPDATE SET value = value + excluded.value"));
  for (const auto& [series, value] : deltas) {
    WARDEN_RETURN_IF_ERROR(q.Bind(1, series).BindDouble(2, value).Exec().status());
    q.Reset();
  }
  return tx->Commit();
}

Result<MetricSnapshot> SqliteStore::MetricTotals() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q,
      db_->Prepare("SELECT series, sum(value) FROM ("
                   "SELECT m.key AS series, m.value AS value FROM workers w, "
                   "json_each(w.metrics) m WHERE json_valid(w.metrics) "
                   "AND m.type IN ('integer', 'real') "
                   "UNION ALL SELECT series, value FROM metrics_retired "
                   "UNION ALL SELECT 'warden_fenced_writes_total', count(*) FROM fenced_writes "
                   "UNION ALL SELECT 'warden_jobs_enqueued_total', "
                   "coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'jobs'), 0)"
                   ") GROUP BY series"));
  MetricSnapshot out;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out[q.Text(0)] = q.Double(1);
  }
  return out;
}

}  // namespace warden::sqlite
