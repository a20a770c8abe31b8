// MemoryStore: filters, job delete and bulk operations (warden/bulk.h), as
// SQLite's statements (sqlite_store_bulk.cc) over the tables.
#include <algorithm>
#include <string>
#include <vector>

#include "store/memory/memory_store.h"

namespace warden::memory {

bool MatchesFilter(const Tables& t, const JobRow& job, const JobFilter& f) {
  if (!f.states.empty() &&
      std::find(f.states.begin(), f.states.end(), job.state) == f.states.end()) {
    return false;
  }
  if ((!f.queue.empty() && job.queue != f.queue) || (!f.task.empty() && job.task != f.task)) {
    return false;
  }
  if (!f.unique_key.empty() && job.unique_key != f.unique_key) return false;
  if (!f.concurrency_key.empty() && job.concurrency_key != f.concurrency_key) return false;
  if (f.created_after && job.created_at < *f.created_after) return false;
  if (f.created_before && job.created_at >= *f.created_before) return false;
  if (f.finished_after && (!job.finished_at || *job.finished_at < *f.finished_after)) {
    return false;
  }
  if (f.finished_before && (!job.finished_at || *job.finished_at >= *f.finished_before)) {
    return false;
  }
  if (f.max_id > 0 && job.id > f.max_id) return false;
  if (f.error_kind && job.last_error != f.error_kind) return false;
  if (f.rescued && std::none_of(job.attempts.begin(), job.attempts.end(), [](const auto& a) {
        return a.outcome == ErrorKindName(ErrorKind::kLost);
      })) {
    return false;
  }
  if (!f.search.empty() && job.payload.find(f.search) == std::string::npos &&
      ToJobInfoWithExtras(t, job).last_error_message.find(f.search) == std::string::npos) {
    return false;
  }
  return true;
}


Status MemoryStore::JobDelete(JobId id, const AuditEntry& audit) {
  MutexLock lock(db_->mu);
  auto it = db_->t.jobs.find(id);
  if (it == db_->t.jobs.end()) return NotFound("no job with id " + std::to_string(id));
  if (!IsTerminal(it->second.state)) {
    return FailedPrecondition("job " + std::to_string(id) + " is " +
                              JobStateName(it->second.state) +
                              "; only succeeded, dead, cancelled or expired jobs can be deleted");
  }
  EraseJobRow(db_->t, it);
  AuditEntry entry = audit;
  entry.count = 1;
  AppendAudit(db_->t, std::move(entry), clock_->NowMs());
  return Status::Ok();
}

Result<BulkOp> MemoryStore::BulkOpCreate(BulkAction action, const JobFilter& filter,
                                         const std::string& actor, const RetryOptions& retry) {
  WARDEN_ASSIGN_OR_RETURN(JobFilter scope, BulkScope(action, filter));
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  BulkOp op;
  op.id = ++t.last_bulk_id;
  op.action = action;
  op.filter = filter;
  op.filter.before_id = op.filter.max_id = 0;
  op.filter.limit = 0;
  op.actor = actor;
  op.fresh = action == BulkAction::kRetry && retry.fresh;
  op.high_water = t.jobs.empty() ? 0 : t.jobs.rbegin()->first;
  op.cursor = op.high_water + 1;
  scope.max_id = op.high_water;
  if (op.high_water > 0) {
    for (const auto& [id, job] : t.jobs) op.total += MatchesFilter(t, job, scope) ? 1 : 0;
  }
  op.created_at = clock_->NowMs();
  if (op.total == 0) {
    op.state = BulkState::kDone;
    op.finished_at = op.created_at;
  }
  t.bulk_ops[op.id] = op;
  AppendAudit(t, AuditEntry{0, 0, actor, BulkAuditAction(action), BulkAuditTarget(op), op.total},
        op.created_at);
  return op;
}

Result<BulkOp> MemoryStore::BulkOpGet(int64_t id) {
  MutexLock lock(db_->mu);
  auto it = db_->t.bulk_ops.find(id);
  if (it == db_->t.bulk_ops.end()) return NotFound("no bulk operation " + std::to_string(id));
  return it->second;
}

Result<std::vector<BulkOp>> MemoryStore::BulkOpList(int limit) {
  MutexLock lock(db_->mu);
  std::vector<BulkOp> out;
  for (auto it = db_->t.bulk_ops.rbegin();
       it != db_->t.bulk_ops.rend() && static_cast<int>(out.size()) < limit; ++it) {
    out.push_back(it->second);
  }
  return out;
}

Result<std::optional<BulkOp>> MemoryStore::BulkOpClaim(const std::string& owner, Millis lease,
                                                       int64_t only) {
  MutexLock lock(db_->mu);
  const TimeMs now = clock_->NowMs();
  for (auto& [id, op] : db_->t.bulk_ops) {
    if (op.state != BulkState::kRunning || (only != 0 && id != only)) continue;
    if (!op.owner.empty() && op.owner != owner && op.lease_expires_at > now) continue;
    op.owner = owner;
    op.lease_expires_at = now + lease.count();
    return std::optional<BulkOp>(op);
  }
  return std::optional<BulkOp>();
}

Result<BulkOp> MemoryStore::BulkOpStep(int64_t id, const std::string& owner, int batch,
                                       Millis lease) {
  MutexLock lock(db_->mu);
  Tables& t = db_->t;
  auto it = t.bulk_ops.find(id);
  if (it == t.bulk_ops.end()) return NotFound("no bulk operation " + std::to_string(id));
  BulkOp op = it->second;  // written back whole, as a transaction would commit
  if (op.state != BulkState::kRunning) return op;
  if (op.owner != owner) {
    return Aborted("bulk operation " + std::to_string(id) + " is run by " + op.owner + " now");
  }
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(JobFilter scope, BulkScope(op.action, op.filter));
  scope.max_id = op.high_water;
  std::vector<JobId> ids;
  // Down from the cursor, as SQLite's rowid scan.
  for (auto j = std::make_reverse_iterator(t.jobs.lower_bound(op.cursor));
       j != t.jobs.rend() && static_cast<int>(ids.size()) < batch; ++j) {
    if (MatchesFilter(t, j->second, scope)) ids.push_back(j->first);
  }
  for (JobId job : ids) {
    switch (op.action) {
      case BulkAction::kRetry: {
        const Status s = RetryLocked(job, now, op.actor, op.id, op.fresh);
        if (s.ok()) ++op.done;
        else if (s.code() == StatusCode::kFailedPrecondition) ++op.skipped;
        else return s;
        break;
      }
      case BulkAction::kCancel: {
        WARDEN_ASSIGN_OR_RETURN(JobState s, CancelLocked(job, now, op.actor, op.id));
        (void)s;
        ++op.done;
        break;
      }
      case BulkAction::kDelete:
        EraseJobRow(t, t.jobs.find(job));
        ++op.done;
        break;
    }
  }
  if (auto end = AdvanceBulkOp(op, ids, batch, now, lease)) AppendAudit(t, *end, now);
  const bool woken = op.action == BulkAction::kRetry && op.done > it->second.done;
  it->second = op;
  if (woken) db_->wake->WakeAll();
  return op;
}

Status MemoryStore::BulkOpRelease(int64_t id, const std::string& owner) {
  MutexLock lock(db_->mu);
  auto it = db_->t.bulk_ops.find(id);
  if (it == db_->t.bulk_ops.end()) return NotFound("no bulk operation " + std::to_string(id));
  BulkOp& op = it->second;
  if (op.state == BulkState::kRunning && op.owner == owner) {
    op.owner.clear();
    op.lease_expires_at.reset();
  }
  return Status::Ok();
}

}  // namespace warden::memory
