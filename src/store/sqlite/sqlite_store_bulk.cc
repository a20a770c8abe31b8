// SqliteStore: job delete and bulk operations (warden/bulk.h).
#include <string>
#include <vector>

#include "store/sqlite/sqlite_store.h"
#include "warden/text.h"

namespace warden::sqlite {
namespace {

const char* const kBulkColumns =
    "id, action, filter, actor, state, high_water, cursor, total, done, skipped, batches, "
    "created_at, finished_at, owner, lease_expires_at, fresh";

BulkOp BulkFromRow(const Stmt& q) {
  BulkOp op;
  op.id = q.Int(0);
  op.action = ParseBulkAction(q.Text(1)).value_or(BulkAction::kRetry);
  // Written by BulkOpCreate from a filter that passed; read back alike.
  auto filter = JobFilterFromJson(Json::parse(q.Text(2), nullptr, false));
  if (filter.has_value()) op.filter = *filter;
  op.actor = q.Text(3);
  op.state = q.Text(4) == "done" ? BulkState::kDone : BulkState::kRunning;
  op.high_water = q.Int(5);
  op.cursor = q.Int(6);
  op.total = q.Int(7);
  op.done = q.Int(8);
  op.skipped = q.Int(9);
  op.batches = static_cast<int>(q.Int(10));
  op.created_at = q.Int(11);
  op.finished_at = q.OptInt(12);
  op.owner = q.Text(13);
  op.lease_expires_at = q.OptInt(14);
  op.fresh = q.Int(15) != 0;
  return op;
}

}  // namespace

Status SqliteStore::DeleteLocked(JobId id) {
  WARDEN_ASSIGN_OR_RETURN(Stmt a, db_->Prepare("DELETE FROM attempts WHERE job_id = ?"));
  WARDEN_RETURN_IF_ERROR(a.Bind(1, id).Exec().status());
  WARDEN_ASSIGN_OR_RETURN(Stmt acts, db_->Prepare("DELETE FROM job_actions WHERE job_id = ?"));
  WARDEN_RETURN_IF_ERROR(acts.Bind(1, id).Exec().status());
  WARDEN_RETURN_IF_ERROR(CountSelected(*db_,
                                       "SELECT " WARDEN_GROUP_COLUMNS
                                       ", state, count(*) FROM jobs WHERE id = ? GROUP BY 1, 2, "
                                       "3, 4",
                                       std::nullopt, [&](Stmt& q) { q.Bind(1, id); }));
  WARDEN_ASSIGN_OR_RETURN(Stmt j, db_->Prepare("DELETE FROM jobs WHERE id = ?"));
  return j.Bind(1, id).Exec().status();
}

Status SqliteStore::JobDelete(JobId id, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("SELECT state FROM jobs WHERE id = ?"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
  if (!row) return NotFound("no job with id " + std::to_string(id));
  const JobState state = ParseJobState(q.Text(0)).value_or(JobState::kDead);
  q.Reset();
  if (!IsTerminal(state)) {
    return FailedPrecondition("job " + std::to_string(id) + " is " + JobStateName(state) +
                              "; only succeeded, dead, cancelled or expired jobs can be deleted");
  }
  WARDEN_RETURN_IF_ERROR(DeleteLocked(id));
  AuditEntry entry = audit;
  entry.count = 1;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, clock_->NowMs()));
  return tx->Commit();
}

Result<BulkOp> SqliteStore::BulkOpCreate(BulkAction action, const JobFilter& filter,
                                         const std::string& actor, const RetryOptions& retry) {
  WARDEN_ASSIGN_OR_RETURN(JobFilter scope, BulkScope(action, filter));
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  BulkOp op;
  op.action = action;
  op.filter = filter;
  op.filter.before_id = op.filter.max_id = 0;
  op.actor = actor;
  op.fresh = action == BulkAction::kRetry && retry.fresh;
  op.created_at = now;
  {
    WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("SELECT coalesce(max(id), 0) FROM jobs"));
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    op.high_water = row ? q.Int(0) : 0;
    q.Reset();
  }
  op.cursor = op.high_water + 1;
  if (op.high_water > 0) {
    scope.max_id = op.high_water;
    WARDEN_ASSIGN_OR_RETURN(Stmt c, db_->Prepare("SELECT (" + JobCountSql(scope) + ")"));
    BindListing(c, scope, false);
    WARDEN_ASSIGN_OR_RETURN(bool row, c.Step());
    op.total = row ? c.Int(0) : 0;
    c.Reset();
  }
  if (op.total == 0) {
    op.state = BulkState::kDone;
    op.finished_at = now;
  }
  WARDEN_ASSIGN_OR_RETURN(
      Stmt ins, db_->Prepare("INSERT INTO bulk_ops (action, filter, actor, state, high_water, "
                             "cursor, total, created_at, finished_at, fresh) VALUES (?, ?, ?, "
                             "?, ?, ?, ?, ?, ?, ?)"));
  ins.Bind(1, BulkActionName(action))
      .Bind(2, JobFilterToJson(op.filter).dump())
      .Bind(3, actor)
      .Bind(4, BulkStateName(op.state))
      .Bind(5, op.high_water)
      .Bind(6, op.cursor)
      .Bind(7, op.total)
      .Bind(8, now)
      .Bind(9, op.finished_at)
      .Bind(10, op.fresh ? 1 : 0);
  WARDEN_RETURN_IF_ERROR(ins.Exec().status());
  op.id = sqlite3_last_insert_rowid(db_->raw());
  WARDEN_RETURN_IF_ERROR(AuditLocked(
      AuditEntry{0, 0, actor, BulkAuditAction(action), BulkAuditTarget(op), op.total}, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return op;
}

Result<BulkOp> SqliteStore::BulkOpGetLocked(int64_t id) {
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare(std::string("SELECT ") + kBulkColumns + " FROM bulk_ops WHERE id = ?"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
  if (!row) return NotFound("no bulk operation " + std::to_string(id));
  BulkOp op = BulkFromRow(q);
  q.Reset();
  return op;
}

Result<BulkOp> SqliteStore::BulkOpGet(int64_t id) {
  MutexLock lock(mu_);
  return BulkOpGetLocked(id);
}

Result<std::vector<BulkOp>> SqliteStore::BulkOpList(int limit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(std::string("SELECT ") + kBulkColumns +
                                                " FROM bulk_ops ORDER BY id DESC LIMIT ?"));
  q.Bind(1, limit);
  std::vector<BulkOp> out;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(BulkFromRow(q));
  }
  q.Reset();
  return out;
}

Result<std::optional<BulkOp>> SqliteStore::BulkOpClaim(const std::string& owner, Millis lease,
                                                       int64_t only) {
  MutexLock lock(mu_);
  // Under the write lock: two runners cannot both take a row.
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT id FROM bulk_ops INDEXED BY bulk_ops_running WHERE state = "
                           "'running' AND (owner IS NULL OR owner = ?1 OR lease_expires_at <= "
                           "?2) AND (?3 = 0 OR id = ?3) ORDER BY id LIMIT 1"));
  q.Bind(1, owner).Bind(2, now).Bind(3, only);
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) {
    q.Reset();
    return std::optional<BulkOp>();
  }
  const int64_t id = q.Int(0);
  q.Reset();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE bulk_ops SET owner = ?, lease_expires_at = ? WHERE id = ?"));
  WARDEN_RETURN_IF_ERROR(
      upd.Bind(1, owner).Bind(2, now + lease.count()).Bind(3, id).Exec().status());
  WARDEN_ASSIGN_OR_RETURN(BulkOp op, BulkOpGetLocked(id));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return std::optional<BulkOp>(op);
}

Result<BulkOp> SqliteStore::BulkOpStep(int64_t id, const std::string& owner, int batch,
                                       Millis lease) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  WARDEN_ASSIGN_OR_RETURN(BulkOp op, BulkOpGetLocked(id));
  if (op.state != BulkState::kRunning) return op;
  if (op.owner != owner) {
    return Aborted("bulk operation " + std::to_string(id) + " is run by " +
                   (op.owner.empty() ? std::string("no one") : op.owner) + " now");
  }
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(JobFilter scope, BulkScope(op.action, op.filter));
  scope.max_id = op.high_water;
  scope.before_id = op.cursor;
  scope.limit = batch;
  std::vector<JobId> ids;
  {
    WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(JobScanIdsSql(scope)));
    JobFilter unstated = scope;
    unstated.states.clear();
    BindListing(q, unstated, true);
    while (true) {
      WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) break;
      ids.push_back(q.Int(0));
    }
    q.Reset();
  }
  for (JobId job : ids) {
    switch (op.action) {
      case BulkAction::kRetry: {
        const Status s = RetryLocked(job, now, ActionOrigin{op.actor, op.id, op.fresh});
        if (s.ok()) ++op.done;
        else if (s.code() == StatusCode::kFailedPrecondition) ++op.skipped;
        else return s;
        break;
      }
      case BulkAction::kCancel: {
        WARDEN_ASSIGN_OR_RETURN(JobState s, CancelLocked(job, now, ActionOrigin{op.actor, op.id}));
        (void)s;
        ++op.done;
        break;
      }
      case BulkAction::kDelete:
        WARDEN_RETURN_IF_ERROR(DeleteLocked(job));
        ++op.done;
        break;
    }
  }
  if (auto end = AdvanceBulkOp(op, ids, batch, now, lease)) {
    WARDEN_RETURN_IF_ERROR(AuditLocked(*end, now));
  }
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE bulk_ops SET cursor = ?, done = ?, skipped = ?, batches = "
                             "?, state = ?, finished_at = ?, owner = ?, lease_expires_at = ? "
                             "WHERE id = ?"));
  upd.Bind(1, op.cursor)
      .Bind(2, op.done)
      .Bind(3, op.skipped)
      .Bind(4, op.batches)
      .Bind(5, BulkStateName(op.state))
      .Bind(6, op.finished_at)
      .BindTextOrNull(7, op.owner)
      .Bind(8, op.lease_expires_at)
      .Bind(9, id);
  WARDEN_RETURN_IF_ERROR(upd.Exec().status());
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  if (op.action == BulkAction::kRetry && !ids.empty()) NotifyWorkers();
  return op;
}

Status SqliteStore::BulkOpRelease(int64_t id, const std::string& owner) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("UPDATE bulk_ops SET owner = NULL, lease_expires_at = NULL WHERE id = "
                           "? AND owner = ? AND state = 'running'"));
  WARDEN_RETURN_IF_ERROR(q.Bind(1, id).Bind(2, owner).Exec().status());
  return tx->Commit();
}

}  // namespace warden::sqlite
