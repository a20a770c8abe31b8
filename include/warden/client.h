// Client: enqueue jobs and administer a warden database.
//
//   auto client = warden::Client::Open("sqlite:jobs.db");
//   if (!client) { /* client.error().ToString() */ }
//   warden::JobSpec spec;
//   spec.task = "send-email";
//   spec.payload = {{"to", "a@example.com"}};
//   auto id = (*client)->Enqueue(spec);
//
// Enqueue returns once the job is durably stored (an acknowledged job
// survives power loss unless the URL says `?sync=normal`) and wakes idle
// workers on this host at once.
//
// Thread safety: a Client may be shared between threads (calls serialise).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "warden/backlog.h"
#include "warden/bulk.h"
#include "warden/job.h"
#include "warden/nodes.h"
#include "warden/operator.h"
#include "warden/status.h"
#include "warden/timeline.h"
#include "warden/why.h"

namespace warden {

class Store;

// What one maintenance pass did (Client::Sweep, and the workers' own).
// A running job recovered by a sweep, for the metrics (core/metrics.h).
struct Recovery {
  std::string queue;
  const char* cause = "";  // "proven_death" or "lease_expiry"
  JobState next = JobState::kAvailable;  // what became of the job
  ErrorKind kind = ErrorKind::kLost;     // as recorded on it (crash_loop: quarantined)
  // From the fault being found (the pass that proved the death began) or
  // the lease last seen renewed, to the job being runnable again.
  Millis took{0};
};

struct SweepSummary {
  int proven_dead = 0;    // workers proven dead (same host, process gone)
  int presumed_dead = 0;  // workers silent past the keepalive threshold
  int rescued = 0;        // running jobs recovered
  int expired = 0;        // waiting jobs past their start deadline: expired
  int promoted = 0;       // scheduled or retryable jobs now due: available
  int pruned = 0;         // jobs finished longer ago than the retention: deleted
  std::vector<Recovery> recoveries;  // one per rescued job
};

class Client {
 public:
  // `sqlite:PATH` or a plain path (created on first use).
  // `busy_timeout`: how long a call waits for another process's write lock
  // before failing with kUnavailable.
  static Result<std::unique_ptr<Client>> Open(const std::string& db_url,
                                              Millis busy_timeout = Millis(5000));
  // The same for a database that must exist already: a SQLite file that
  // does not is kNotFound, and nothing is created.
  static Result<std::unique_ptr<Client>> OpenExisting(const std::string& db_url,
                                                      Millis busy_timeout = Millis(5000));
  ~Client();

  // Validates the spec (task name, queue, limits) before storing it.
  Result<EnqueueResult> Enqueue(const JobSpec& spec);
  // All or nothing: one transaction.
  Result<std::vector<EnqueueResult>> EnqueueMany(std::span<const JobSpec> specs);

  Result<JobInfo> GetJob(JobId id);
  // The newest jobs that match, at most filter.limit. `total`, unless null,
  // gets how many match in all (read with the page, so the two agree; it
  // costs a count of every matching job).
  Result<std::vector<JobInfo>> ListJobs(const JobFilter& filter, int64_t* total = nullptr);
  // A dead, cancelled or expired job (or a retryable one) runs again, its
  // budgets reset; a scheduled one is refused (RunJobNow). `retry.fresh`:
  // without its checkpoint (audited with "fresh": true).
  Status RetryJob(JobId id, const RetryOptions& retry = {});
  // A scheduled job, or a retryable one waiting out its backoff, is due now;
  // its attempts and budgets stay as they were.
  Status RunJobNow(JobId id);
  // Returns kCancelled, or kRunning when the job's worker was asked to stop it.
  Result<JobState> CancelJob(JobId id);
  // Jobs scheduled, available, retryable or running.
  Result<int64_t> CountUnfinished();

  // Every worker row, oldest first: each incarnation of a restarted worker
  // is a row of its own. `live_only`: active and draining ones only.
  Result<std::vector<WorkerInfo>> ListWorkers(bool live_only = false);
  // Declares a worker (by name or id) dead now and recovers its jobs: for a
  // worker whose host is gone. Returns how many jobs were recovered. A
  // worker whose process is provably running on this host is refused
  // (kFailedPrecondition, naming its pid and host) unless `force`.
  Result<int> ReleaseWorker(const std::string& name_or_id, bool force = false);

  Result<Stats> GetStats();
  // The waiting jobs (scheduled, available, retryable) that no active
  // worker can run: none listens on their queue, has their task, or (for a
  // command job) runs command jobs. They wait, never lost, until one comes.
  Result<std::vector<BacklogGroup>> Unserved();
  // Whether an active worker would run a job like `spec` now.
  Result<bool> AnyWorkerRuns(const JobSpec& spec);
  // Maintenance passes for `watch` (0: one pass). A worker or a lease is
  // silent only once seen unchanged for its whole length (a wall clock can
  // step, so no single look can tell): one pass proves deaths on this host,
  // expires and promotes, but finds nothing silent; watching a lease's
  // length (or the keepalive threshold) finds what stayed silent that long.
  // `keepalive_threshold` below the workers' default (10 s) is
  // kInvalidArgument: the sweep cannot see the heartbeat intervals of the
  // workers it would presume dead.
  Result<SweepSummary> Sweep(Millis keepalive_threshold = Millis(10'000),
                             Millis watch = Millis(0));
  Result<int> SchemaVersion();
  // The store's clock (PostgreSQL: the server's), for ages and "ago".
  Result<TimeMs> StoreNow();
  // A health check: takes and releases the store's write lock.
  Status CheckWritable();

  // The operator surface. Every action below (and RetryJob, CancelJob,
  // ReleaseWorker) is written to the audit log as done by `actor`
  // ("token:NAME" for the HTTP API, "cli:USER" for the CLI).
  void SetActor(std::string actor) { actor_ = std::move(actor); }
  const std::string& actor() const { return actor_; }
  // Workers claim nothing from a paused queue; jobs running there finish.
  // false: it was paused (resumed) already. A queue no job, pause, limit or
  // live worker names is NotFound (a typo would pause nothing and stay
  // paused) unless `create`: paused before its first job.
  Result<bool> PauseQueue(const std::string& queue, bool create = false);
  Result<bool> ResumeQueue(const std::string& queue);
  // Since when `queue` is paused; nullopt: it is not.
  Result<std::optional<TimeMs>> QueuePausedSince(const std::string& queue);
  // Every queue with a job, a pause or a limit, by name, with its live
  // workers.
  Result<std::vector<QueueInfo>> ListQueues();
  // Flow control (warden/flow.h): sets `queue`'s fleet-wide limits to
  // exactly `limits` (a limit not given is removed; empty clears them
  // all). false: they were so already. Running jobs are never stopped.
  Result<bool> SetQueueLimits(const std::string& queue, const QueueLimits& limits);
  // `queue`'s limits and what holds them now; nullopt: it has none.
  Result<std::optional<QueueFlow>> GetQueueFlow(const std::string& queue);
  // Nodes (warden/nodes.h), all by name: the registry's, and the nodes of
  // live workers or running jobs that it lacks (`registered` false).
  Result<std::vector<NodeInfo>> ListNodes();
  // Registers a node or brings a removed one back; `capacity` when
  // `set_capacity` (none: no limit). false: it was so already.
  Result<bool> AddNode(const NodeSpec& node, bool set_capacity);
  // false: it was so already. A node not registered is registered with the
  // flag if it has live workers; otherwise kNotFound (a typo must not
  // register a node).
  Result<bool> SetNodeEnabled(const std::string& name, bool enabled);
  struct NodeRemoval {
    bool changed = false;       // false: it was removed already
    int workers_released = 0;   // with `force`: its live workers
    int64_t jobs_recovered = 0;  // with `force`: their running jobs
  };
  // Takes a node out: its workers claim nothing more there and drain; its
  // jobs come back by the usual recovery. `force`: the operator's word that
  // the machine is gone: its live workers are released at once, as
  // ReleaseWorker(..., force) does.
  Result<NodeRemoval> RemoveNode(const std::string& name, bool force);
  struct NodeSync {
    NodeSyncReport report;
    int workers_released = 0;  // with `force`: of the removed nodes
    int64_t jobs_recovered = 0;
  };
  // The registry's present nodes become `inventory`'s (NodeSync in the
  // store); an empty inventory is refused unless `allow_empty` (it would
  // remove every node). `force`: as RemoveNode's, for every removed node.
  Result<NodeSync> SyncNodes(const std::vector<NodeSpec>& inventory, bool dry_run, bool force,
                             bool allow_empty);
  // A token with `scope`; its secret is in the result and nowhere else.
  // Names: as queue names, not all digits (a revoke takes a name or an id).
  // `expires_in`: refused as expired from that long after its creation
  // (at least a minute); nullopt: never.
  Result<NewToken> CreateToken(const std::string& name, Scope scope,
                               std::optional<Millis> expires_in = std::nullopt);
  Result<std::vector<TokenInfo>> ListTokens();
  Result<TokenInfo> RevokeToken(const std::string& name_or_id);
  // The live token `secret` is, its use noted (at most once a minute per
  // token: TokenInfo::last_used_at). Any other text, a revoked token or a
  // wrong secret: kNotFound with the same message, whatever was wrong; the
  // right secret of an expired token: kNotFound saying it expired, and when.
  Result<TokenInfo> Authenticate(const std::string& secret);
  // Why job `id` is not running now (warden/why.h): every reason that
  // holds, with its evidence, as the store sees it at this moment.
  Result<std::vector<WhyReason>> WhyNotRunning(JobId id);
  // Job `id`'s recovery timeline (warden/timeline.h).
  Result<JobTimeline> Timeline(JobId id);
  // Newest first; `before`: an entry id to page back from (0: the newest).
  Result<std::vector<AuditEntry>> ListAudit(int limit = 100, int64_t before = 0);
  // Every metric of the fleet (docs/metrics.md) in the Prometheus text
  // format: what `warden serve` answers on /metrics.
  Result<std::string> ExportMetrics();
  // The fleet's counters and histograms alone: series, as in the text
  // format, -> value.
  Result<std::map<std::string, double>> MetricTotals();

  // Deletes a finished job (succeeded, dead, cancelled, expired) and its
  // attempts; a job not finished is kFailedPrecondition. Audited.
  Status DeleteJob(JobId id);

  // Bulk operations (warden/bulk.h). How many jobs `action` would change
  // now: the dry run (nothing is written).
  Result<int64_t> BulkCount(BulkAction action, const JobFilter& filter);
  // Records an operation (audited); a runner (BulkRun) does its batches.
  // `retry.fresh` is for a retry only (kInvalidArgument otherwise).
  Result<BulkOp> BulkStart(BulkAction action, const JobFilter& filter,
                           const RetryOptions& retry = {});
  Result<BulkOp> BulkGet(int64_t id);
  Result<std::vector<BulkOp>> BulkList(int limit = 20);
  struct BulkRunOptions {
    int batch = 1000;      // jobs per transaction
    Millis lease{10'000};  // how long a silent runner keeps an operation
    int64_t only = 0;      // run only this operation (0: any unfinished)
    // After each committed batch.
    std::function<void(const BulkOp&)> progress;
    // Checked between batches: true stops, and gives the operation up
    // (another runner, or this one later, goes on from its cursor).
    const std::atomic<bool>* stop = nullptr;
  };
  // Takes one unfinished operation whose runner is gone (or none ran yet)
  // and runs it to its end as runner `owner`. nullopt: none to take. An
  // operation taken over by another runner meanwhile ends the run with
  // kAborted.
  Result<std::optional<BulkOp>> BulkRun(const std::string& owner, const BulkRunOptions& options);

 private:
  explicit Client(std::unique_ptr<Store> store);
  Status ReleaseNodesWorkers(const std::vector<std::string>& nodes, int* workers, int64_t* jobs);
  std::unique_ptr<Store> store_;
  std::string actor_ = "library";
};

// Limits applied to every enqueue (docs/guarantees.md, "Durability and
// limits").
inline constexpr size_t kMaxPayloadBytes = 1 << 20;
inline constexpr size_t kMaxNameBytes = 200;  // task, queue, keys

// Checks a spec the way Enqueue does; exposed for tools that batch.
Status ValidateSpec(const JobSpec& spec);
// A task, queue, key or other name: `what` names it in the message. Not
// required: empty passes.
Status ValidateName(const std::string& what, const std::string& v, bool required = true);
Status ValidateQueueName(const std::string& queue);

}  // namespace warden
