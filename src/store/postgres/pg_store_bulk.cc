// PgStore: job delete and bulk operations (warden/bulk.h).
//
// A batch locks the operation row (FOR UPDATE) first: runners of one
// operation, should two ever overlap, take turns, and the second sees the
// first's cursor and owner. Each job is locked and its state read again
// before it is changed: under READ COMMITTED it may have changed since the
// batch's scan (a job no longer in scope is passed over).
#include <algorithm>
#include <string>
#include <vector>

#include "core/operator_rules.h"
#include "store/postgres/pg_rows.h"
#include "store/postgres/pg_store.h"

namespace warden::pg {

namespace {

const char* const kBulkColumns =
    "id, action, filter, actor, state, high_water, cursor, total, done, skipped, batches, "
    "created_at, finished_at, owner, lease_expires_at, fresh";

BulkOp BulkFromRow(const Rows& r, int i) {
  BulkOp op;
  op.id = r.Int(i, 0);
  op.action = ParseBulkAction(r.Text(i, 1)).value_or(BulkAction::kRetry);
  auto filter = JobFilterFromJson(Json::parse(r.Text(i, 2), nullptr, false));
  if (filter.has_value()) op.filter = *filter;
  op.actor = r.Text(i, 3);
  op.state = r.Text(i, 4) == "done" ? BulkState::kDone : BulkState::kRunning;
  op.high_water = r.Int(i, 5);
  op.cursor = r.Int(i, 6);
  op.total = r.Int(i, 7);
  op.done = r.Int(i, 8);
  op.skipped = r.Int(i, 9);
  op.batches = static_cast<int>(r.Int(i, 10));
  op.created_at = r.Int(i, 11);
  op.finished_at = r.OptInt(i, 12);
  op.owner = r.Text(i, 13);
  op.lease_expires_at = r.OptInt(i, 14);
  op.fresh = r.Text(i, 15) == "t";
  return op;
}

Status DeleteJob(Conn& conn, JobId id) {
  WARDEN_RETURN_IF_ERROR(
      conn.Exec("DELETE FROM warden.attempts WHERE job_id = $1::bigint", Params().Add(id))
          .status());
  WARDEN_RETURN_IF_ERROR(
      conn.Exec("DELETE FROM warden.job_actions WHERE job_id = $1::bigint", Params().Add(id))
          .status());
  return conn.Exec("DELETE FROM warden.jobs WHERE id = $1::bigint", Params().Add(id)).status();
}

}  // namespace

Status PgStore::JobDelete(JobId id, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(JobState state, LockJobStateLocked(id));
  if (!IsTerminal(state)) {
    return FailedPrecondition("job " + std::to_string(id) + " is " + JobStateName(state) +
                              "; only succeeded, dead, cancelled or expired jobs can be deleted");
  }
  WARDEN_RETURN_IF_ERROR(DeleteJob(*conn_, id));
  AuditEntry entry = audit;
  entry.count = 1;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  return tx->Commit();
}

Result<BulkOp> PgStore::BulkOpCreate(BulkAction action, const JobFilter& filter,
                                     const std::string& actor, const RetryOptions& retry) {
  WARDEN_ASSIGN_OR_RETURN(JobFilter scope, BulkScope(action, filter));
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  BulkOp op;
  op.action = action;
  op.filter = filter;
  op.filter.before_id = op.filter.max_id = 0;
  op.actor = actor;
  op.fresh = action == BulkAction::kRetry && retry.fresh;
  op.created_at = now;
  {
    // The newest committed job. (A job inserted by a transaction still open
    // may get a smaller id and commit later: it is in scope if it matches
    // when its batch reads it, like any job changed meanwhile.)
    WARDEN_ASSIGN_OR_RETURN(Rows r,
                            conn_->Exec("SELECT coalesce(max(id), 0) FROM warden.jobs"));
    op.high_water = r.Int(0, 0);
  }
  op.cursor = op.high_water + 1;
  if (op.high_water > 0) {
    scope.max_id = op.high_water;
    Params p;
    const std::string where = ListedWhere(scope, &p);
    WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec("SELECT count(*)" + where, p));
    op.total = r.Int(0, 0);
  }
  if (op.total == 0) {
    op.state = BulkState::kDone;
    op.finished_at = now;
  }
  WARDEN_ASSIGN_OR_RETURN(
      Rows r,
      conn_->Exec("INSERT INTO warden.bulk_ops (action, filter, actor, state, high_water, cursor, "
                  "total, created_at, finished_at, fresh) VALUES ($1, $2, $3, $4, $5::bigint, "
                  "$6::bigint, $7::bigint, $8::bigint, $9::bigint, $10::boolean) RETURNING id",
                  Params()
                      .Add(BulkActionName(action))
                      .Add(JobFilterToJson(op.filter).dump())
                      .Add(actor)
                      .Add(BulkStateName(op.state))
                      .Add(op.high_water)
                      .Add(op.cursor)
                      .Add(op.total)
                      .Add(now)
                      .Add(op.finished_at)
                      .Add(op.fresh)));
  op.id = r.Int(0, 0);
  WARDEN_RETURN_IF_ERROR(AuditLocked(
      AuditEntry{0, 0, actor, BulkAuditAction(action), BulkAuditTarget(op), op.total}, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return op;
}

Result<BulkOp> PgStore::BulkOpGetLocked(int64_t id, bool for_update) {
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec(std::string("SELECT ") + kBulkColumns +
                              " FROM warden.bulk_ops WHERE id = $1::bigint" +
                              (for_update ? " FOR UPDATE" : ""),
                          Params().Add(id)));
  if (r.empty()) return NotFound("no bulk operation " + std::to_string(id));
  return BulkFromRow(r, 0);
}

Result<BulkOp> PgStore::BulkOpGet(int64_t id) {
  MutexLock lock(mu_);
  return BulkOpGetLocked(id, false);
}

Result<std::vector<BulkOp>> PgStore::BulkOpList(int limit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec(std::string("SELECT ") + kBulkColumns +
                              " FROM warden.bulk_ops ORDER BY id DESC LIMIT $1::int",
                          Params().Add(limit)));
  std::vector<BulkOp> out;
  for (int i = 0; i < r.size(); ++i) out.push_back(BulkFromRow(r, i));
  return out;
}

Result<std::optional<BulkOp>> PgStore::BulkOpClaim(const std::string& owner, Millis lease,
                                                   int64_t only) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  // One conditional statement; SKIP LOCKED passes over a row a batch holds.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r,
      conn_->Exec(std::string("UPDATE warden.bulk_ops SET owner = $1, lease_expires_at "
                              "= $2::bigint WHERE id = (SELECT id FROM warden.bulk_ops "
                              "WHERE state = 'running' AND (owner IS NULL OR owner = $1 "
                              "OR lease_expires_at <= $3::bigint) AND ($4::bigint = 0 OR id = "
                              "$4::bigint) ORDER BY id LIMIT 1 "
                              "FOR UPDATE SKIP LOCKED) RETURNING ") +
                      kBulkColumns,
                  Params().Add(owner).Add(now + lease.count()).Add(now).Add(only)));
  if (r.empty()) return std::optional<BulkOp>();
  return std::optional<BulkOp>(BulkFromRow(r, 0));
}

Result<BulkOp> PgStore::BulkOpStep(int64_t id, const std::string& owner, int batch,
                                   Millis lease) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(BulkOp op, BulkOpGetLocked(id, true));
  if (op.state != BulkState::kRunning) return op;
  if (op.owner != owner) {
    return Aborted("bulk operation " + std::to_string(id) + " is run by " +
                   (op.owner.empty() ? std::string("no one") : op.owner) + " now");
  }
  WARDEN_ASSIGN_OR_RETURN(JobFilter scope, BulkScope(op.action, op.filter));
  scope.max_id = op.high_water;
  scope.before_id = op.cursor;
  std::vector<JobId> ids;
  {
    Params p;
    std::string common;
    const std::string where = PageWhere(scope, &p, &common);
    p.Add(batch);
    WARDEN_ASSIGN_OR_RETURN(
        Rows r, conn_->Exec("SELECT j.id" + where + " ORDER BY j.id DESC LIMIT $" +
                                std::to_string(p.values().size()) + "::int",
                            p));
    for (int i = 0; i < r.size(); ++i) ids.push_back(r.Int(i, 0));
  }
  for (JobId job : ids) {
    auto state = LockJobStateLocked(job);
    if (!state.has_value()) {
      if (state.error().code() == StatusCode::kNotFound) continue;  // deleted meanwhile
      return state.error();
    }
    if (std::find(scope.states.begin(), scope.states.end(), *state) == scope.states.end()) {
      continue;  // left the scope since the scan
    }
    switch (op.action) {
      case BulkAction::kRetry: {
        // A unique-key refusal fails the statement, which would end the
        // transaction: under a savepoint it ends only this retry.
        WARDEN_RETURN_IF_ERROR(conn_->ExecScript("SAVEPOINT bulk_retry"));
        const Status s = RetryLocked(job, now, ActionOrigin{op.actor, op.id, op.fresh});
        if (s.ok()) {
          WARDEN_RETURN_IF_ERROR(conn_->ExecScript("RELEASE SAVEPOINT bulk_retry"));
          ++op.done;
        } else if (s.code() == StatusCode::kFailedPrecondition) {
          WARDEN_RETURN_IF_ERROR(conn_->ExecScript("ROLLBACK TO SAVEPOINT bulk_retry"));
          ++op.skipped;
        } else {
          return s;
        }
        break;
      }
      case BulkAction::kCancel:
        WARDEN_RETURN_IF_ERROR(CancelLocked(job, *state, now, ActionOrigin{op.actor, op.id}));
        ++op.done;
        break;
      case BulkAction::kDelete:
        WARDEN_RETURN_IF_ERROR(DeleteJob(*conn_, job));
        ++op.done;
        break;
    }
  }
  if (auto end = AdvanceBulkOp(op, ids, batch, now, lease)) {
    WARDEN_RETURN_IF_ERROR(AuditLocked(*end, now));
  }
  WARDEN_RETURN_IF_ERROR(
      conn_
          ->Exec("UPDATE warden.bulk_ops SET cursor = $1::bigint, done = $2::bigint, skipped = "
                 "$3::bigint, batches = $4::int, state = $5, finished_at = $6::bigint, owner = "
                 "$7, lease_expires_at = $8::bigint WHERE id = $9::bigint",
                 Params()
                     .Add(op.cursor)
                     .Add(op.done)
                     .Add(op.skipped)
                     .Add(op.batches)
                     .Add(BulkStateName(op.state))
                     .Add(op.finished_at)
                     .AddTextOrNull(op.owner)
                     .Add(op.lease_expires_at)
                     .Add(id))
          .status());
  if (op.action == BulkAction::kRetry && !ids.empty()) {
    // Delivered when the batch commits, and only then.
    WARDEN_RETURN_IF_ERROR(conn_->Exec("SELECT pg_notify('warden_jobs', '')").status());
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return op;
}

Status PgStore::BulkOpRelease(int64_t id, const std::string& owner) {
  MutexLock lock(mu_);
  return conn_
      ->Exec("UPDATE warden.bulk_ops SET owner = NULL, lease_expires_at = NULL WHERE id = "
             "$1::bigint AND owner = $2 AND state = 'running'",
             Params().Add(id).Add(owner))
      .status();
}

}  // namespace warden::pg
