// The job model: what a job is, its states, and what is kept of each
// attempt. See docs/design.md ("Job model") for the state machine:
//
//   scheduled --(run_at reached)--> available --claim--> running --ok--> succeeded
//                                       ^                   |
//                                       |  retryable error, crash, timeout, lost
//                                       +---- retryable <---+--(no retries left /
//                                                               at-most-once started)--> dead
//   available|scheduled|retryable --cancel--> cancelled
//   running --cancel--> (worker stops it) --> cancelled
//   available past its start deadline --> expired
//
// Times are milliseconds since the Unix epoch, UTC, as judged by the store's
// clock. Payloads, checkpoints and results are JSON.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace warden {

using Json = nlohmann::json;
using Millis = std::chrono::milliseconds;
using TimeMs = int64_t;  // ms since the Unix epoch, UTC
using JobId = int64_t;
using WorkerId = int64_t;

enum class JobState {
  kScheduled,
  kAvailable,
  kRunning,
  kSucceeded,
  kRetryable,
  kDead,
  kCancelled,
  kExpired,
};

// Why an attempt did not succeed.
enum class ErrorKind {
  kError,      // the handler failed / the command exited non-zero
  kCrash,      // the job's process died by a signal
  kTimeout,    // ran past its timeout and was stopped
  kLost,       // its worker died or lost its lease
  kReleased,   // a graceful shutdown stopped it (not charged)
  kCrashLoop,  // quarantined: crashed, or its worker died under it, max_crashes times
  kCancelled,  // an operator cancelled it while running
};

// How an attempt's loss was found, kept with the attempt (its `lost_by`):
// - proven_death: its worker was proven gone (its process, its host's boot,
//   or its PostgreSQL session), at once;
// - lease_expiry: its lease ran out unrenewed (the worker may be alive but
//   frozen or cut off; its late writes are fenced);
// - operator: `warden workers release` declared its worker dead;
// - release: its worker stopped it while shutting down;
// - worker_stop: its worker stopped while still holding it.
enum class LossCause { kProvenDeath, kLeaseExpiry, kOperator, kRelease, kWorkerStop };

enum class Delivery { kAtLeastOnce, kAtMostOnce };
enum class RetryPolicy { kNone, kDefault, kForever };

const char* JobStateName(JobState s);
const char* ErrorKindName(ErrorKind k);
const char* LossCauseName(LossCause c);
const char* DeliveryName(Delivery d);
const char* RetryPolicyName(RetryPolicy p);
std::optional<JobState> ParseJobState(const std::string& s);
// "scheduled, available, ..., expired": what a bad state name is told.
std::string JobStateNames();
std::optional<ErrorKind> ParseErrorKind(const std::string& s);
// "error, crash, ..., cancelled": what a bad error kind is told.
std::string ErrorKindNames();
std::optional<Delivery> ParseDelivery(const std::string& s);
std::optional<RetryPolicy> ParseRetryPolicy(const std::string& s);
bool IsTerminal(JobState s);

// What to enqueue. Only `task` is required.
struct JobSpec {
  std::string queue = "default";
  std::string task;
  Json payload = Json::object();
  // A shell command run by `sh -c` (a worker runs these only with
  // --allow-cmd). Empty: the job is run by the handler registered for `task`.
  std::string command;
  int priority = 0;                 // higher runs first
  Millis delay{0};                  // run no earlier than now + delay
  // Run no earlier than this time (by the store's clock); a time already
  // past runs now. Exclusive with a positive `delay`.
  std::optional<TimeMs> run_at;
  int max_attempts = 5;             // charged attempts before `dead`
  RetryPolicy retry = RetryPolicy::kDefault;
  Delivery delivery = Delivery::kAtLeastOnce;
  Millis timeout = std::chrono::minutes(30);
  std::optional<Millis> lease;       // per job; default: the worker's lease
  std::optional<Millis> start_deadline;  // expire if not started by then
  std::string unique_key;            // empty: none
  std::string concurrency_key;       // empty: none
  int max_crashes = 3;
};

struct EnqueueResult {
  JobId id = 0;
  bool created = false;  // false: a live job with the same unique_key exists
};

struct AttemptError {
  ErrorKind kind = ErrorKind::kError;
  std::string message;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string stderr_tail;
  std::string stdout_tail;  // a command's: the last 4 KiB of its stdout
};

// One run of a job: from claim to outcome.
struct AttemptInfo {
  int attempt = 0;
  WorkerId worker = 0;
  std::string worker_name;            // empty: its worker's row was pruned
  int64_t lease_token = 0;
  TimeMs claimed_at = 0;
  std::optional<TimeMs> started_at;   // at-most-once: the durable "started" mark
  std::optional<TimeMs> finished_at;
  std::string outcome;                // "running", "succeeded" or an error kind
  std::optional<AttemptError> error;
  // A succeeded attempt's: what its worker noticed (fd-3 control lines it
  // ignored). A failed attempt's are at the end of its stderr tail.
  std::string note;
  // A lost or released attempt's LossCause name; empty for any other, and
  // for one that ended before this was recorded (schema 10 on SQLite, 12 on
  // PostgreSQL).
  std::string lost_by;
  // When the job could be claimed again after this attempt failed (its
  // backoff's end; its end at once when there was none). None: the attempt
  // succeeded, runs, or left the job finished for good.
  std::optional<TimeMs> runnable_at;
};

// A completion or failure that fencing refused: a worker wrote for a lease
// the job no longer had (its loss was already found; another attempt may
// run). Kept until pruned with the worker rows.
struct FencedWriteInfo {
  TimeMs at = 0;
  WorkerId worker = 0;
  std::string worker_name;  // empty: its row was pruned
  int64_t lease_token = 0;
  std::string what;         // "complete", "fail", ...
};

// An operator's action on one job (a retry, a run-now, a cancel, a release
// of the worker running it: `workers release`, `nodes remove --force`), kept
// with the job until it is deleted or pruned, for its timeline. The audit
// log has the action too, but a bulk operation writes one entry for all its
// jobs; these rows say which jobs it changed. Written in the action's
// transaction, by every store, from the job's row as the action found it.
struct JobActionInfo {
  TimeMs at = 0;
  std::string action;  // "retry", "run_now", "cancel", "release" (of its worker)
  std::string actor;   // as in the audit log: "cli:USER", "token:NAME"
  int64_t op = 0;      // the bulk operation that did it; 0: a one-job action
  bool fresh = false;  // a retry that dropped the checkpoint
  // The job before the action: its state, and when and how it had ended
  // (a retried job's end, which the retry clears from its row).
  JobState from = JobState::kAvailable;
  std::optional<TimeMs> finished_at;
  std::optional<ErrorKind> last_error;
  int charged = 0;
  int max_attempts = 0;
  int crashes = 0;
  int max_crashes = 0;
};

struct JobInfo {
  JobId id = 0;
  std::string queue;
  std::string task;
  std::string command;
  Json payload;
  int priority = 0;
  JobState state = JobState::kAvailable;
  int attempt = 0;        // runs so far (every claim)
  int charged = 0;        // runs counted against max_attempts
  int crashes = 0;
  int max_attempts = 0;
  int max_crashes = 0;
  RetryPolicy retry = RetryPolicy::kDefault;
  Delivery delivery = Delivery::kAtLeastOnce;
  Millis timeout{0};
  std::optional<Millis> lease;
  std::string unique_key;
  std::string concurrency_key;
  std::optional<WorkerId> worker;
  std::string worker_name;  // the worker's name; empty: none, or its row was pruned
  int64_t lease_token = 0;
  std::optional<TimeMs> lease_expires_at;
  TimeMs run_at = 0;
  std::optional<TimeMs> start_deadline_at;
  TimeMs created_at = 0;
  std::optional<TimeMs> started_at;
  std::optional<TimeMs> finished_at;
  Json checkpoint;  // null when none
  Json result;      // null when none
  std::optional<ErrorKind> last_error;
  // The message of the failed attempt `last_error` is about (empty when
  // none says more than the kind: a job cancelled while it waited, say).
  std::string last_error_message;
  // Its last attempt was lost or crashed on `avoid_node`, and another node
  // could take it: that node's workers leave it until `avoid_node_until`
  // (docs/nodes.md, "After a loss"). Unset: no node is avoided.
  std::string avoid_node;
  std::optional<TimeMs> avoid_node_until;
  std::vector<AttemptInfo> attempts;  // filled by Client::GetJob
};

// A job's attempts as every surface shows them (docs/design.md, "Attempts"):
// the runs charged against its budget, of max_attempts, and, when some runs
// were not charged (released, requeued uncharged, or run before an
// operator's retry reset the count), all its runs after: "2/5 (4 runs)".
std::string AttemptsText(const JobInfo& j);

// Which jobs a listing shows: every condition given must hold.
//
// Pages go newest first by id (a keyset, not an offset): `before_id` is the
// smallest id of the page before, so every page starts where the last one
// ended, whatever jobs change, arrive or go meanwhile. A job is listed at
// most once across the pages of one listing (ids only go down), and one
// that still matches when its page is read is never skipped; one that
// stopped matching before its page was read is not shown.
struct JobFilter {
  std::vector<JobState> states;  // empty: every state; else any of these
  std::string queue;             // empty: all
  std::string task;              // empty: all
  std::string unique_key;        // empty: any
  std::string concurrency_key;   // empty: any
  // created_at in [created_after, created_before); finished_at likewise
  // (a finished range leaves out the jobs not finished).
  std::optional<TimeMs> created_after, created_before;
  std::optional<TimeMs> finished_after, finished_before;
  // Case-sensitive substring of the payload's JSON text or of the last
  // error's message (JobInfo::last_error_message). Empty: any.
  std::string search;
  // The kind of the job's last error (JobInfo::last_error); none: any. The
  // overview's crash-loop count is the jobs of kCrashLoop (Stats).
  std::optional<ErrorKind> error_kind;
  // Only jobs with an attempt that ended `lost` (rescued): the jobs
  // Stats::rescued_jobs counts.
  bool rescued = false;
  JobId before_id = 0;  // only ids below this (0: no bound): the cursor
  JobId max_id = 0;     // only ids up to this (0: no bound)
  int limit = 100;      // the newest this many
};

enum class WorkerState { kActive, kDraining, kStopped, kDead };
const char* WorkerStateName(WorkerState s);
std::optional<WorkerState> ParseWorkerState(const std::string& s);

struct WorkerInfo {
  WorkerId id = 0;
  std::string name;
  std::string node;
  int pid = 0;
  std::string version;
  std::vector<std::string> queues;
  int concurrency = 0;
  WorkerState state = WorkerState::kActive;
  TimeMs started_at = 0;
  TimeMs last_heartbeat = 0;
  std::optional<TimeMs> stopped_at;
  std::string death_reason;  // empty unless dead
  int running = 0;           // jobs it holds now
  std::vector<std::string> tasks;  // it has a handler or a --task for
  bool allow_commands = false;     // it runs command jobs (--allow-cmd)
  // Its --keepalive-threshold as it registered it (rows older than schema
  // SQLite 15 / PostgreSQL 18 did not keep it: 10 s, the default).
  Millis keepalive{10'000};
  // How long its heartbeat has gone unrenewed, when that is longer than its
  // keepalive, by the store's clock (warden/worker_silence.h, in src/core):
  // `silent`. A display, not a verdict: a worker is marked dead, and its
  // jobs come back, only by the recovery protocol (docs/design.md). Filled
  // by the Client's listings; nullopt: renewed within its keepalive.
  std::optional<Millis> silent_for;
  // Its node is registered and disabled or removed (warden/nodes.h): it
  // claims nothing there. Filled by the Client's listings.
  bool node_disabled = false;
  // A row that takes part in maintenance only and never claims, as `warden
  // serve`'s (WorkerOptions::maintenance_only): no listing, count or metric
  // takes it for a worker that serves work.
  bool MaintenanceOnly() const { return concurrency == 0; }
  // Active, not silent, on a node that takes work, and a claimer: it may
  // claim now.
  bool Claiming() const {
    return !MaintenanceOnly() && state == WorkerState::kActive && !silent_for &&
           !node_disabled;
  }
};

struct Stats {
  std::vector<std::pair<std::string, int64_t>> jobs;     // by state
  std::vector<std::pair<std::string, int64_t>> workers;  // by state
  int64_t rescued = 0;          // attempts that ended `lost`
  int64_t rescued_jobs = 0;     // jobs with such an attempt (JobFilter::rescued)
  int64_t fenced_writes = 0;    // completions rejected by fencing
  int64_t crash_loops = 0;
};

}  // namespace warden
