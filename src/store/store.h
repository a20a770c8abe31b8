// Store: the one interface between warden and a database.
//
// Every method is one statement or one transaction, and every write a worker
// makes about a job is fenced by (id, lease_token): it changes nothing when
// the token is no longer current, and says so. The store's clock (SQLite:
// the injected Clock, one host; PostgreSQL: now()) writes leases and
// heartbeats, but never judges them: that clock steps, so silence is judged
// by watching rows stay unchanged (core/silence.h), and the store only
// carries out verdicts, each conditional on the row being as judged.
//
// Decisions about what a failure means (retry, backoff, dead, crash loop)
// come from core/retry.h so that every backend decides alike; a backend only
// reads the row, asks core, and writes the answer in the same transaction.
//
// Thread safety: a Store object may be shared between threads (backends
// serialise on an internal mutex); open one per thread that must not wait
// behind the others (a worker opens one for heartbeats and sweeps).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/metrics.h"
#include "warden/backlog.h"
#include "warden/bulk.h"
#include "warden/job.h"
#include "warden/nodes.h"
#include "warden/operator.h"
#include "warden/status.h"

namespace warden {

struct JobRef {
  JobId id = 0;
  int64_t lease_token = 0;
};

struct ClaimParams {
  WorkerId worker = 0;
  std::vector<std::string> queues;  // empty: every queue
  std::vector<std::string> tasks;   // tasks this worker has handlers for
  bool allow_commands = false;      // also claim `--cmd` jobs
  int limit = 1;
  // Of the `limit` jobs next in claim order, the last `ahead` are claimed
  // only if SafeToClaimAhead (core/claim_ahead.h): they are for slots not
  // free yet. The others are skipped, not replaced by later jobs.
  int ahead = 0;
  Millis default_lease{10'000};
  // The claiming worker's node: a job kept from it after a loss there
  // (JobInfo::avoid_node) is left to the other nodes until then.
  std::string node;
};

// How an attempt ended, as reported by the worker that ran it.
struct JobOutcome {
  JobRef ref;
  bool success = false;
  Json result;         // success
  AttemptError error;  // failure
  // What the worker noticed about a successful attempt (control lines on
  // fd 3 it ignored): kept with the attempt. A failure's goes in its
  // stderr tail.
  std::string note{};
  // A failure found by someone other than its worker: how (see LossCause).
  // Unset for a worker's own failures, of which only kReleased is a loss.
  std::optional<LossCause> lost_by{};
};

// The LossCause name an attempt that ends with `o` keeps; null: none.
inline const char* LostByOf(const JobOutcome& o) {
  if (o.lost_by) return LossCauseName(*o.lost_by);
  return o.error.kind == ErrorKind::kReleased ? LossCauseName(LossCause::kRelease) : nullptr;
}

struct WorkerRegistration {
  bool allow_commands = false;  // claims `--cmd` jobs
  std::string name;
  std::string node;     // its node (warden/nodes.h): the host name unless given
  std::string host;     // the host name, whatever the node: what proves deaths
  std::string boot_id;  // distinguishes reboots of one host
  std::string pid_ns;   // pids are only comparable within one namespace
  int pid = 0;
  int64_t pid_start = 0;  // /proc/PID/stat start time: detects pid reuse
  std::string version;
  std::vector<std::string> queues;
  std::vector<std::string> tasks;
  int concurrency = 1;
  Millis keepalive{10'000};  // its --keepalive-threshold: what displays call silent
};

// A worker row as the sweeper needs it to judge liveness.
struct WorkerLiveness {
  WorkerId id = 0;
  std::string name;
  std::string host;  // its host name (WorkerRegistration::host; the node for older rows)
  std::string boot_id;
  std::string pid_ns;
  int pid = 0;
  int64_t pid_start = 0;
  TimeMs last_heartbeat = 0;
  // PostgreSQL: the worker's session lock is gone though the server has not
  // restarted since it took it: its process died, or its connection was cut
  // (it reconnects within milliseconds if alive). SQLite: always false.
  bool session_lost = false;
  // Changes each time the worker takes its session lock again.
  int64_t session_epoch = 0;
};

struct HeartbeatReply {
  bool alive = true;            // false: this worker was declared dead/stopped
  // false: its node is registered and removed or disabled: it claims
  // nothing there, and drains (warden/nodes.h).
  bool node_takes_work = true;
  std::vector<JobId> cancel;    // its running jobs an operator cancelled
  std::vector<JobRef> held;     // running jobs the store says it holds
};

// A running job's lease as last written (by its claim or a heartbeat).
struct LeaseRow {
  JobRef ref;
  WorkerId worker = 0;
  TimeMs expires_at = 0;  // changes with every renewal
  Millis length{0};       // the lease the job runs under
  // Its worker's row, for the heartbeat that renews all of a worker's
  // leases at once (expires_at - length == worker_heartbeat then).
  std::optional<TimeMs> worker_heartbeat;
};

// Who holds a maintenance role.
struct LeaderRow {
  WorkerId holder = 0;
  TimeMs expires_at = 0;  // changes with every renewal
  Millis ttl{0};          // what the holder renews it for (0: not recorded)
  bool holder_live = false;
};

// A running job recovered from a worker that lost it, and what became of it.
struct RescuedJob {
  JobId id = 0;
  std::string queue;
  JobState next = JobState::kAvailable;  // available, retryable, dead, cancelled
  ErrorKind kind = ErrorKind::kLost;     // as recorded on the job (crash_loop: quarantined)
};

struct RescueReport {
  int rescued = 0;  // running jobs recovered (retried, requeued or dead)
  std::vector<RescuedJob> jobs;  // each of them
};

// A (queue, state) whose kept job count (Store::JobCountsVerify) is not the
// number of such jobs.
struct JobCountDrift {
  std::string queue;
  std::string state;
  int64_t kept = 0;
  int64_t real = 0;
  std::string task;      // the counts are kept by task and command too
  bool command = false;
};

// A token as a request's lookup finds it (Store::TokenFind): `now` is the
// store's time, what its expiry and last use are judged by.
struct TokenFound {
  TokenInfo info;
  std::string hash;
  TimeMs now = 0;
};

// A live worker's own line to the store: wake-ups when jobs may have become
// claimable (SQLite: a datagram socket beside the file; PostgreSQL: LISTEN),
// and on PostgreSQL the session-level advisory lock whose release proves
// the worker gone. One per worker, used by one thread.
class WorkerSession {
 public:
  virtual ~WorkerSession() = default;
  // Poll for POLLIN; -1 while disconnected (poll with a timeout, then Drain).
  virtual int fd() = 0;
  // Consumes what arrived and restores a lost connection (lock and LISTEN
  // included). true: woken.
  virtual Result<bool> Drain() = 0;
  // The worker now holds a job whose lease is `lease`: the session must not
  // be ended as dead (its lock lost) before that long a silence, when the
  // job may still run, not yet fenced by its worker. Never shortens.
  virtual Status KeepAliveFor(Millis lease) {
    (void)lease;
    return Status::Ok();
  }
  // Whether losing the session lets others prove this worker dead
  // (PostgreSQL: its lock; SQLite: wake-ups only, deaths are proven from the
  // process), and whether it holds what proves it alive now. Not held,
  // others may soon prove it dead (Store::WorkerListLive's session_lost).
  virtual bool LossProvesDeath() const { return false; }
  virtual bool Holds() const { return true; }
};

class Store {
 public:
  virtual ~Store() = default;

  // Schema.
  virtual Status Migrate() = 0;
  virtual Result<int> SchemaVersion() = 0;
  virtual Result<TimeMs> Now() = 0;
  // Takes and releases the write lock: fails (kUnavailable) while another
  // process holds it longer than the busy timeout.
  virtual Status CheckWritable() = 0;

  // Jobs.
  virtual Result<std::vector<EnqueueResult>> JobInsertMany(
      std::span<const JobSpec> specs) = 0;
  virtual Result<std::vector<JobInfo>> JobClaim(const ClaimParams& p) = 0;
  // At-most-once: durably record that the handler is about to start.
  // false: fenced off (the worker must not start it).
  virtual Result<bool> JobMarkStarted(JobRef ref) = 0;
  // One transaction. accepted[i] is false where outcome i was fenced off;
  // such writes are logged (fenced_writes) and change nothing else.
  virtual Result<std::vector<bool>> JobFinishMany(
      WorkerId worker, std::span<const JobOutcome> outcomes) = 0;
  virtual Result<bool> JobCheckpoint(JobRef ref, const Json& checkpoint) = 0;
  virtual Result<JobInfo> JobGet(JobId id) = 0;  // with attempts
  // The job's writes that fencing refused, oldest first.
  virtual Result<std::vector<FencedWriteInfo>> JobFencedWrites(JobId id) = 0;
  // Newest first, at most f.limit. `total`, unless null, gets how many
  // jobs match the filter in all, counted by the same statement (a listing
  // may count every matching job: it is not on a worker's path).
  virtual Result<std::vector<JobInfo>> JobList(const JobFilter& f, int64_t* total) = 0;
  // dead/cancelled/expired (or waiting) -> available, budgets reset;
  // running and succeeded jobs are refused; `retry.fresh` drops its
  // checkpoint too. With `audit` (count 1) and its JobActionInfo, in one
  // transaction: a retry that happened is in the log.
  virtual Status JobRetry(JobId id, const RetryOptions& retry, const AuditEntry& audit) = 0;
  // scheduled or retryable -> available now (CheckRunNowAllowed), its
  // attempts and budgets kept. With `audit` (count 1), in one transaction.
  virtual Status JobRunNow(JobId id, const AuditEntry& audit) = 0;
  // pending -> cancelled; running -> cancel requested (its worker stops it).
  // With `audit` (count 1), in one transaction.
  virtual Result<JobState> JobCancel(JobId id, const AuditEntry& audit) = 0;
  // The operators' retries, run-nows, cancels and releases of its worker
  // (WorkerDeclareDead with an audit entry) of the job (each written
  // with its action, bulk ones included), oldest first.
  virtual Result<std::vector<JobActionInfo>> JobActions(JobId id) = 0;
  // Jobs not yet finished: scheduled, available, retryable, running.
  virtual Result<int64_t> JobCountUnfinished() = 0;
  // How long until the earliest scheduled or retryable job is due, by the
  // store's clock (an idle worker sleeps until then rather than a whole poll
  // interval; a relative time, so a skewed worker clock does not matter).
  virtual Result<std::optional<Millis>> JobNextDueIn() = 0;
  // The scheduled, available, retryable and running jobs on `queues` (empty:
  // every queue), grouped by queue, task, command or not, and state (the
  // running ones: those with a worker), in that order of states and then by
  // group. The waiting groups come from the kept counts, so it reads a row
  // per group and the running jobs, not every waiting job.
  virtual Result<std::vector<BacklogGroup>> JobBacklog(
      const std::vector<std::string>& queues) = 0;

  // Workers.
  virtual Result<WorkerId> WorkerRegister(const WorkerRegistration& r) = 0;
  // Refreshes the worker row and extends the leases of its running jobs.
  virtual Result<HeartbeatReply> WorkerHeartbeat(WorkerId id) = 0;
  virtual Status WorkerSetDraining(WorkerId id) = 0;
  // Goodbye: state stopped. Normally the worker released its jobs first;
  // any it still holds are recovered as `lost`.
  virtual Status WorkerStop(WorkerId id) = 0;
  virtual Result<std::vector<WorkerInfo>> WorkerList(bool live_only) = 0;
  // Live (active/draining) workers, optionally only those named `name`.
  virtual Result<std::vector<WorkerLiveness>> WorkerListLive(
      const std::string& name) = 0;
  // Proven dead (or released by an operator: `cause` says which, kept with
  // each lost attempt): marks it dead and recovers its running jobs at once.
  // `audit`, unless null, is written in the same transaction, its count the
  // jobs recovered (an operator's release), with a JobActionInfo "release"
  // for each of them.
  virtual Result<RescueReport> WorkerDeclareDead(WorkerId id, const std::string& reason,
                                                 LossCause cause, const AuditEntry* audit) = 0;
  // The worker's session (see WorkerSession); `lease` bounds how long the
  // server waits before it drops a silent connection, and so the lock.
  virtual Result<std::unique_ptr<WorkerSession>> OpenSession(WorkerId id, Millis lease) = 0;
  // Wakes idle workers (after jobs were freed, retried or rescued; inserts
  // wake them by themselves). Best effort.
  virtual void NotifyWorkers() = 0;
  // Presumed dead: the live workers judged silent (core/silence.h) for
  // `silent_for`, each only while its heartbeat is still as seen. Their jobs
  // wait for their own leases to be judged (JobRescueSilent).
  virtual Result<int> WorkerMarkSilent(std::span<const WorkerLiveness> silent,
                                       Millis silent_for) = 0;
  // Maintenance.
  // Takes or renews a role for `ttl`: taken when free, already `holder`'s,
  // held by a worker no longer live, or held exactly as `silent` says (the
  // caller judged that holding silent: not renewed since).
  virtual Result<bool> LeaderTryAcquire(const std::string& name, WorkerId holder, Millis ttl,
                                        const std::optional<LeaderRow>& silent) = 0;
  virtual Result<std::optional<LeaderRow>> LeaderRead(const std::string& name) = 0;
  // The leases of all running jobs (as many as the live workers' slots).
  virtual Result<std::vector<LeaseRow>> JobLeases() = 0;
  // Recovers the jobs whose leases were judged silent, each only while its
  // lease is still as seen (same token, not renewed since).
  virtual Result<RescueReport> JobRescueSilent(std::span<const LeaseRow> silent) = 0;
  virtual Result<int> JobExpire() = 0;   // past their start deadline
  virtual Result<int> JobPromote() = 0;  // due scheduled/retryable -> available
  // Deletes finished jobs, stopped and dead workers and fenced-write
  // records older than `retention`; what the deleted rows counted
  // (MetricTotals) is added to a retired total in the same transaction.
  virtual Result<int> Prune(Millis retention) = 0;
  virtual Result<Stats> GetStats() = 0;
  // The jobs by queue and state that QueueList, GetStats and
  // JobCountUnfinished read are kept as jobs change, not counted at each
  // read (docs/metrics.md). On PostgreSQL each statement that changes jobs
  // appends its net changes (never a row that every worker updates) and
  // this folds what was appended into the totals, so readers add up few
  // rows; the maintenance leader calls it each pass. Elsewhere: nothing.
  virtual Status JobCountsFold() = 0;
  // Counts every job (O(jobs): for tests and checks, not for a hot path)
  // and returns each (queue, state) whose kept count differs; empty: none.
  virtual Result<std::vector<JobCountDrift>> JobCountsVerify() = 0;

  // Metrics (core/metrics.h). A worker's snapshot of what it has counted
  // since it registered, in SnapshotToJson's form; replaces its last one.
  virtual Status WorkerPutMetrics(WorkerId id, const std::string& snapshot) = 0;
  // The fleet's totals: the snapshots of every worker row, plus what pruned
  // rows left behind, plus the store's own counts:
  // warden_fenced_writes_total (the fenced-write log) and
  // warden_jobs_enqueued_total (the job id sequence). Never decreases.
  virtual Result<MetricSnapshot> MetricTotals() = 0;
  // Adds to the totals what a process without a worker row counted (an
  // operator's release, a `warden sweep`): one transaction.
  virtual Status MetricsAdd(const MetricSnapshot& deltas) = 0;

  // The operator surface. Each action writes its audit entry in its own
  // transaction: an action that happened is in the log.
  // Pausing a paused queue (or resuming a running one) changes nothing and
  // returns false; workers claim nothing from a paused queue, and the
  // jobs they run there finish.
  virtual Result<bool> QueueSetPaused(const std::string& queue, bool paused,
                                      const AuditEntry& audit) = 0;
  virtual Result<std::vector<QueueInfo>> QueueList() = 0;
  // Flow control (warden/flow.h). Sets `queue`'s limits to exactly `limits`
  // (empty: none; the rate window's record goes with the rate). false:
  // they were so already (audited with count 0). Lowering a limit stops
  // nothing: running jobs finish and claims wait for room.
  virtual Result<bool> QueueSetLimits(const std::string& queue, const QueueLimits& limits,
                                      const AuditEntry& audit) = 0;
  // `queue`'s limits and what holds them now; nullopt: it has none.
  virtual Result<std::optional<QueueFlow>> QueueFlowOf(const std::string& queue) = 0;
  // Nodes (warden/nodes.h), all by name: the registry's rows, and the nodes
  // it lacks that have live workers or running jobs (node_listing.h).
  virtual Result<std::vector<NodeInfo>> NodeList() = 0;
  // Registers `node` (or brings a removed one back), with its capacity when
  // `set_capacity` (otherwise a new node has none and a known one keeps
  // its own); enabled is kept. false: it was so already.
  virtual Result<bool> NodePut(const NodeSpec& node, bool set_capacity,
                               const AuditEntry& audit) = 0;
  // Registers an unknown node (present) with the flag. false: it was so.
  virtual Result<bool> NodeSetEnabled(const std::string& name, bool enabled,
                                      const AuditEntry& audit) = 0;
  // kNotFound when `name` is not registered; false: removed already.
  virtual Result<bool> NodeRemove(const std::string& name, const AuditEntry& audit) = 0;
  // One transaction: the registry's present nodes become exactly
  // `inventory`'s, with its capacities; enabled flags are kept (a removed
  // node's too, should it come back). `dry_run`: changes nothing, writes
  // no audit entry, and reports what it would change.
  virtual Result<NodeSyncReport> NodeSync(std::span<const NodeSpec> inventory, bool dry_run,
                                          const AuditEntry& audit) = 0;
  // When `queue` was paused; nullopt: it is not paused.
  virtual Result<std::optional<TimeMs>> QueuePausedAt(const std::string& queue) = 0;
  // The running job that holds concurrency key `key`, if any.
  virtual Result<std::optional<JobId>> JobHoldingKey(const std::string& key) = 0;
  // A token row (its secret's hash beside it), expiring `lifetime` after
  // its creation if given; kFailedPrecondition when a live token has the
  // name.
  virtual Result<TokenInfo> TokenInsert(const TokenInfo& t, std::optional<Millis> lifetime,
                                        const std::string& hash, const AuditEntry& audit) = 0;
  // The unrevoked token with this id (expired or not), its hash, and the
  // store's time as it was read; kNotFound if none.
  virtual Result<TokenFound> TokenFind(int64_t id) = 0;
  // Sets the token's last_used_at to `at` unless it is already as late.
  virtual Status TokenTouch(int64_t id, TimeMs at) = 0;
  virtual Result<std::vector<TokenInfo>> TokenList() = 0;
  // Revokes the live token with this name (or id); kNotFound if none.
  virtual Result<TokenInfo> TokenRevoke(const std::string& name_or_id,
                                        const AuditEntry& audit) = 0;
  // Newest first: at most `limit` entries with ids below `before` (0: any).
  virtual Result<std::vector<AuditEntry>> AuditList(int limit, int64_t before) = 0;

  // Job delete and bulk operations (warden/bulk.h has the protocol).
  // Deletes a finished job (succeeded, dead, cancelled, expired) and its
  // attempts, with `audit`, in one transaction; kNotFound, or
  // kFailedPrecondition for a job not finished.
  virtual Status JobDelete(JobId id, const AuditEntry& audit) = 0;
  // One transaction: the operation row (high water: the largest job id now;
  // total: the jobs in BulkScope up to it; done at once when that is none)
  // and its audit entry (BulkAuditAction, by `actor`, count: the total).
  // `retry` applies to a retry's jobs (BulkOp::fresh).
  virtual Result<BulkOp> BulkOpCreate(BulkAction action, const JobFilter& filter,
                                      const std::string& actor, const RetryOptions& retry) = 0;
  virtual Result<BulkOp> BulkOpGet(int64_t id) = 0;
  // Newest first, at most `limit`.
  virtual Result<std::vector<BulkOp>> BulkOpList(int limit) = 0;
  // Takes the oldest running operation (or operation `id`, unless 0) that
  // is free, `owner`'s, or whose lease ran out (by the store's clock), for
  // `lease`; nullopt: none.
  virtual Result<std::optional<BulkOp>> BulkOpClaim(const std::string& owner, Millis lease,
                                                    int64_t id) = 0;
  // One batch of at most `batch` jobs, in one transaction with the cursor,
  // the counts and a renewed lease; the last (fewer than `batch` found)
  // also ends the operation and writes its audit entry. kAborted, changing
  // nothing, when `owner` no longer holds the operation.
  virtual Result<BulkOp> BulkOpStep(int64_t id, const std::string& owner, int batch,
                                    Millis lease) = 0;
  // `owner` gives its running operation up (a server stopping): another
  // runner may take it at once. Changes nothing unless `owner` holds it.
  virtual Status BulkOpRelease(int64_t id, const std::string& owner) = 0;
};

struct StoreOptions {
  // SQLite: the clock that judges leases (one host, one clock); default:
  // the system clock. PostgreSQL ignores it: the server's clock judges.
  const Clock* clock = nullptr;
  // Tests only: PostgreSQL reads the time from this clock instead of the
  // server, so the conformance suite can move time on both backends.
  const Clock* database_clock = nullptr;
  // false: survive process crashes but not power loss (SQLite
  // synchronous=NORMAL); the URL may also say `?sync=normal`.
  bool durable = true;
  Millis busy_timeout{5000};
  // memory: seeds the backoff jitter of a database it creates, so that a
  // simulated run repeats exactly; the others draw theirs at random.
  std::optional<uint64_t> jitter_seed;
  // SQLite: false refuses a file that does not exist (kNotFound) instead of
  // creating it: a command that only reads must not leave a new database
  // behind a mistyped path. PostgreSQL: the server refuses a database that
  // does not exist either way.
  bool create_if_missing = true;
  // memory: a database it creates keeps, for each worker, a session lock as
  // PostgreSQL's (held while the worker's session lives; its loss proves
  // the worker dead, WorkerListLive's session_lost): the runtime
  // simulation's PostgreSQL shape. Otherwise sessions are wake-ups only,
  // as on SQLite.
  bool memory_session_proofs = false;
};

// `sqlite:PATH`, a plain PATH, `postgresql://...` / `postgres://...`
// (any libpq connection URI), or `memory:NAME`: a database in this process,
// shared by the stores opened on NAME while any is open (memory/memory_store.h).
Result<std::unique_ptr<Store>> OpenStore(const std::string& url,
                                         StoreOptions options = {});

}  // namespace warden
