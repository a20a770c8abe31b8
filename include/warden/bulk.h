// Bulk operations: retry, cancel or delete every job a filter matches, in
// bounded transactions, resumable after a crash, never doing a job twice.
//
// An operation is a row in the store (Store::BulkOp*), written when it is
// started:
//   - `high_water`: the largest job id at the start. Jobs enqueued later are
//     never touched, whatever the filter says.
//   - `cursor`: each batch takes the next (at most) N jobs in scope with ids
//     below the cursor, newest first, changes them, and moves the cursor to
//     the smallest id it took, all in ONE transaction. A crash between two
//     batches loses nothing and repeats nothing: the next batch starts at
//     the cursor the last committed batch left.
//   - `owner` / `lease_expires_at`: the one process running it now. Every
//     batch checks, in its own transaction, that its runner still owns the
//     row and renews the lease; a runner that lost it (another took over
//     after the lease ran out) changes nothing. Any `warden serve` (and any
//     `warden jobs retry|cancel|delete` by filter) takes over an operation
//     whose lease ran out: a killed runner's operation finishes elsewhere.
//     A runner stopped between batches gives the row up (BulkOpRelease):
//     the next runner need not wait the lease out.
//
// States in scope (a filter's states are narrowed to these; none left is
// kInvalidArgument):
//   retry:  dead, cancelled, expired         -> available
//   cancel: scheduled, available, retryable   -> cancelled;
//           running                           -> cancel requested
//   delete: succeeded, dead, cancelled, expired -> gone, attempts too
// A job that left the scope before its batch reached it is passed over
// (not counted); a retry whose unique key another live job holds is
// skipped and counted in `skipped`.
//
// Audit: one entry when the operation is started (count: the jobs in scope
// then), written with the operation row, and one when it ends (count: the
// jobs changed), written in the transaction of its last batch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "warden/job.h"
#include "warden/operator.h"
#include "warden/status.h"

namespace warden {

enum class BulkAction { kRetry, kCancel, kDelete };
const char* BulkActionName(BulkAction a);  // "retry", "cancel", "delete"
std::optional<BulkAction> ParseBulkAction(const std::string& s);

// The states `a` applies to (above), in JobState order.
std::vector<JobState> BulkActionStates(BulkAction a);
// `f` narrowed to what `a` applies to: its states intersected with
// BulkActionStates (all of those when `f` names none). kInvalidArgument
// when nothing is left ("--state running" for a retry).
Result<JobFilter> BulkScope(BulkAction a, JobFilter f);

// A filter as JSON and back: {"state": [...], "queue", "task",
// "unique_key", "concurrency_key", "created_after", "created_before",
// "finished_after", "finished_before" (RFC 3339), "q"}; absent or empty
// members are no condition. FromJson refuses unknown members, wrong types
// and bad values (kInvalidArgument, naming the member). The cursor and
// limit are not part of it.
Json JobFilterToJson(const JobFilter& f);
Result<JobFilter> JobFilterFromJson(const Json& j);

// A listing's cursor, opaque to clients ("c" then base-36 digits of the
// last id shown): ParseJobCursor refuses anything EncodeJobCursor did not
// write (kInvalidArgument).
std::string EncodeJobCursor(JobId before_id);
Result<JobId> ParseJobCursor(const std::string& cursor);

// The audit log's action for a started operation ("jobs.bulk_retry"; its
// end: the same with ".done") and its target: {"op": ID, "filter": {...}},
// with "fresh": true for a fresh retry.
std::string BulkAuditAction(BulkAction a);

// How an operator's retry (of one job, or a bulk one) treats the job.
struct RetryOptions {
  // Start over: the job's checkpoint is dropped, as if it had never run
  // (its attempts and crashes are reset by every retry).
  bool fresh = false;
};

enum class BulkState { kRunning, kDone };
const char* BulkStateName(BulkState s);

struct BulkOp {
  int64_t id = 0;
  BulkAction action = BulkAction::kRetry;
  JobFilter filter;  // as given; BulkScope narrows it when batches run
  std::string actor;
  bool fresh = false;  // a retry that drops each job's checkpoint
  BulkState state = BulkState::kRunning;
  JobId high_water = 0;  // jobs above were enqueued after the start
  JobId cursor = 0;      // the next batch looks below this id
  int64_t total = 0;     // jobs in scope at the start
  int64_t done = 0;      // jobs changed so far
  int64_t skipped = 0;   // retries refused (unique key held)
  int batches = 0;       // committed batches
  TimeMs created_at = 0;
  std::optional<TimeMs> finished_at;
  std::string owner;  // the runner holding it; empty: none
  std::optional<TimeMs> lease_expires_at;
};

std::string BulkAuditTarget(const BulkOp& op);

// The bookkeeping after a batch that took `ids` (at most `batch`, in the
// order changed): the cursor moves below them, the batch is counted and the
// lease renewed; a short batch was the last, and the operation is then done
// (no owner, no lease). Returns the audit entry of its end, if it ended.
std::optional<AuditEntry> AdvanceBulkOp(BulkOp& op, const std::vector<JobId>& ids, int batch,
                                        TimeMs now, Millis lease);

// As the HTTP API and `--json` show it: {"id", "action", "fresh", "state",
// "filter", "actor", "total", "done", "skipped", "batches", "created_at",
// "finished_at", "owner"} (times RFC 3339; finished_at null while running).
Json BulkOpToJson(const BulkOp& op);

}  // namespace warden
