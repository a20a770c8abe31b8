// Client: job delete and bulk operations (warden/bulk.h).
#include "store/store.h"
#include "warden/client.h"

namespace warden {

Status Client::DeleteJob(JobId id) {
  return store_->JobDelete(id, AuditEntry{0, 0, actor_, "job.delete", std::to_string(id), 1});
}

Result<int64_t> Client::BulkCount(BulkAction action, const JobFilter& filter) {
  WARDEN_ASSIGN_OR_RETURN(JobFilter scope, BulkScope(action, filter));
  scope.before_id = scope.max_id = 0;
  scope.limit = 1;
  int64_t total = 0;
  WARDEN_ASSIGN_OR_RETURN(auto page, store_->JobList(scope, &total));
  (void)page;
  return total;
}

Result<BulkOp> Client::BulkStart(BulkAction action, const JobFilter& filter,
                                 const RetryOptions& retry) {
  if (retry.fresh && action != BulkAction::kRetry) {
    return InvalidArgument(std::string("fresh applies to a retry, not a ") +
                           BulkActionName(action) + ": only a retry keeps or drops a checkpoint");
  }
  return store_->BulkOpCreate(action, filter, actor_, retry);
}

Result<BulkOp> Client::BulkGet(int64_t id) { return store_->BulkOpGet(id); }

Result<std::vector<BulkOp>> Client::BulkList(int limit) {
  if (limit < 1) return InvalidArgument("limit must be at least 1");
  return store_->BulkOpList(limit);
}

Result<std::optional<BulkOp>> Client::BulkRun(const std::string& owner,
                                              const BulkRunOptions& options) {
  if (options.batch < 1) return InvalidArgument("a batch holds at least one job");
  WARDEN_ASSIGN_OR_RETURN(std::optional<BulkOp> op,
                          store_->BulkOpClaim(owner, options.lease, options.only));
  if (!op) return op;
  while (op->state == BulkState::kRunning) {
    if (options.stop && options.stop->load()) {
      // Stopped between batches: another runner may go on at once.
      WARDEN_RETURN_IF_ERROR(store_->BulkOpRelease(op->id, owner));
      op->owner.clear();
      return op;
    }
    WARDEN_ASSIGN_OR_RETURN(*op, store_->BulkOpStep(op->id, owner, options.batch, options.lease));
    if (options.progress) options.progress(*op);
  }
  return op;
}

}  // namespace warden
