// The in-memory store's tables: one plain struct per row, with the columns
// of SQLite's schema (store/migrations/sqlite/, as of version 5) and their meaning,
// so that every MemoryStore method is SqliteStore's statement written over
// std containers. Optional columns are std::optional; a text column that
// SQLite keeps NULL for "none" (keys, JSON) is the empty string here, as
// the decoders read NULL back (store/row_decode.h). JSON columns hold the
// text SQLite would hold (JsonText), read back with ParseStoredJson, so a
// value comes back exactly as it would from SQLite.
//
// As in SQLite's schema 3, the job row holds its attempt in progress (and
// one that succeeded); `attempts` gets a row when an attempt ends any other
// way, or succeeds with a note.
//
// Thread safety: plain data; Tables is guarded by its Database's mutex
// (memory_db.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/metrics.h"
#include "warden/bulk.h"
#include "warden/job.h"
#include "warden/nodes.h"
#include "warden/operator.h"

namespace warden::memory {

struct AttemptRow {
  int attempt = 0;
  WorkerId worker_id = 0;
  int64_t lease_token = 0;
  TimeMs claimed_at = 0;
  std::optional<TimeMs> started_at;
  std::optional<TimeMs> finished_at;
  std::string outcome = "running";  // "succeeded" or an error kind's name
  std::string error_message;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string stderr_tail;  // a succeeded attempt's note
  std::string stdout_tail;
  std::string lost_by;  // a LossCause name, or empty
  std::optional<TimeMs> runnable_at;
};

struct JobRow {
  JobId id = 0;
  std::string queue;
  std::string task;
  std::string command;  // empty: run by the task's handler
  std::string payload;  // JSON text
  int priority = 0;
  JobState state = JobState::kAvailable;
  TimeMs run_at = 0;
  int attempt = 0;
  int charged = 0;
  int crashes = 0;
  int max_attempts = 0;
  int max_crashes = 0;
  RetryPolicy retry = RetryPolicy::kDefault;
  Delivery delivery = Delivery::kAtLeastOnce;
  int64_t timeout_ms = 0;
  std::optional<int64_t> lease_ms;         // the job's own lease, if any
  std::optional<int64_t> active_lease_ms;  // the lease its latest claim set
  std::optional<TimeMs> start_deadline_at;
  std::string unique_key;       // empty: none
  std::string concurrency_key;  // empty: none
  std::optional<WorkerId> worker_id;
  int64_t lease_token = 0;
  std::optional<TimeMs> lease_expires_at;
  bool started_mark = false;
  bool cancel_requested = false;
  std::optional<ErrorKind> last_error;
  std::string checkpoint;  // JSON text; empty: none
  std::string result;      // JSON text; empty: none
  TimeMs created_at = 0;
  std::optional<TimeMs> started_at;  // the latest claim's time
  std::optional<TimeMs> finished_at;
  std::optional<TimeMs> attempt_started_at;  // the at-most-once mark's time
  std::string avoid_node;                    // schema 14 (core/node_preference.h)
  std::optional<TimeMs> avoid_until;
  std::vector<AttemptRow> attempts;          // the `attempts` table's rows, by attempt
  std::vector<JobActionInfo> actions;        // the `job_actions` table's rows, oldest first
};

struct WorkerRow {
  WorkerId id = 0;
  std::string name;
  std::string node;
  std::string host;
  std::string boot_id;
  std::string pid_ns;
  int pid = 0;
  int64_t pid_start = 0;
  std::string version;
  std::string queues;  // JoinList, as stored
  std::string tasks;
  int concurrency = 0;
  WorkerState state = WorkerState::kActive;
  TimeMs started_at = 0;
  TimeMs last_heartbeat = 0;
  std::optional<TimeMs> stopped_at;
  std::string death_reason;
  bool allow_commands = false;
  Millis keepalive{10'000};
  MetricSnapshot metrics;  // its last snapshot (Store::WorkerPutMetrics)
};

struct LeaderEntry {
  WorkerId holder = 0;
  TimeMs expires_at = 0;
  int64_t ttl_ms = 0;
};

struct FencedWrite {
  JobId job_id = 0;
  int64_t lease_token = 0;
  WorkerId worker_id = 0;
  TimeMs at = 0;
  std::string what;
};

// One database. Ids are never reused (SQLite's AUTOINCREMENT): a pruned
// row's id stays taken.
// A worker's session lock (Database::session_proofs), as PostgreSQL's
// advisory lock: `holder` is the session that holds it (0: none).
struct SessionLock {
  int64_t holder = 0;
  bool taken_once = false;  // a lock never taken proves nothing
  int64_t epoch = 0;        // each time it is taken (WorkerLiveness::session_epoch)
};

struct TokenRow {
  TokenInfo info;
  std::string hash;
};

struct Tables {
  std::map<JobId, JobRow> jobs;
  JobId last_job_id = 0;
  std::map<WorkerId, WorkerRow> workers;
  WorkerId last_worker_id = 0;
  std::map<std::string, LeaderEntry> leaders;
  std::vector<FencedWrite> fenced_writes;
  MetricSnapshot metrics_retired;  // what pruned rows counted
  // SQLite's jobs_live_unique index: the live job holding each unique key.
  // Kept by SetJobState, the one way a job changes state.
  std::map<std::string, JobId> live_unique;
  // SQLite's job_counts (schema 9): the jobs by queue and state name (in
  // SQLite's order), and each queue's available jobs by run_at (what its
  // jobs_claim index gives the oldest). Kept by AddJobRow, SetJobState and
  // EraseJobRow, the only ways a job row comes, changes state or goes.
  std::map<std::pair<std::string, std::string>, int64_t> job_counts;
  std::map<std::string, std::set<std::pair<TimeMs, JobId>>> available_by_run_at;
  // Schema 11: the jobs by group (queue, task, command or not) and state,
  // and each scheduled or retryable group's jobs by run_at (jobs_due_group),
  // for JobBacklog. Kept by the same three.
  using GroupKey = std::tuple<std::string, std::string, bool, JobState>;
  std::map<GroupKey, int64_t> group_counts;
  std::map<GroupKey, std::set<std::pair<TimeMs, JobId>>> due_by_group;
  std::map<WorkerId, SessionLock> session_locks;
  int64_t last_session = 0;
  // The operator surface (schema 6): paused queues and when, API tokens by
  // id, the audit log oldest first.
  std::map<std::string, TimeMs> queue_pauses;
  std::map<int64_t, TokenRow> tokens;
  int64_t last_token_id = 0;
  std::vector<AuditEntry> audit;
  // Flow control (SQLite's schema 12): each limited queue's limits, and
  // its claims in the rate window (claims at one moment -> how many).
  std::map<std::string, QueueLimits> queue_limits;
  // The node registry (schema 13): registered nodes by name (registered
  // true), removed ones included.
  std::map<std::string, NodeInfo> nodes;
  std::map<std::string, std::map<TimeMs, int64_t>> queue_starts;
  // Bulk operations (schema 7) by id.
  std::map<int64_t, BulkOp> bulk_ops;
  int64_t last_bulk_id = 0;
};

// Whether a job in `state` holds its unique key (scheduled, available,
// running, retryable).
bool IsLive(JobState state);
// Moves `job` to `state`, keeping Tables::live_unique and the job counts.
void SetJobState(Tables& t, JobRow& job, JobState state);
// Sets `job`'s run_at, keeping Tables::available_by_run_at.
void SetJobRunAt(Tables& t, JobRow& job, TimeMs run_at);
// Adds a new job row / erases one (returns the next), keeping the counts.
void AddJobRow(Tables& t, JobRow row);
std::map<JobId, JobRow>::iterator EraseJobRow(Tables& t, std::map<JobId, JobRow>::iterator it);

bool IsLive(WorkerState state);  // active or draining

// The rows as the public structs, as SQLite's decoders read them: the job
// alone (JobFromColumns); with its worker's name and last error's message
// (JobExtrasFromColumns); an attempts row; a worker with its running count.
JobInfo ToJobInfo(const JobRow& job);
JobInfo ToJobInfoWithExtras(const Tables& t, const JobRow& job);
AttemptInfo ToAttemptInfo(const Tables& t, const AttemptRow& a);
WorkerInfo ToWorkerInfo(const WorkerRow& w, int running);
// The job_actions row SQLite writes for an operator's `action` on `job`:
// the job as the action finds it.
JobActionInfo JobActionOn(const JobRow& job, TimeMs now, const char* action,
                          const std::string& actor, int64_t op, bool fresh);
// Appends `entry` to the audit log, numbered and timed.
void AppendAudit(Tables& t, AuditEntry entry, TimeMs now);

// Whether `job` meets every condition of `f` but its cursor (before_id)
// and limit, as SQLite's listing reads them.
bool MatchesFilter(const Tables& t, const JobRow& job, const JobFilter& f);

}  // namespace warden::memory
