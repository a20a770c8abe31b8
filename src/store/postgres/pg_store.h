// The PostgreSQL backend: many hosts, one queue.
//
// The server's clock judges leases (every "now" is read from the server,
// never from the worker's host), so workers with skewed clocks stay
// correct. Claims lock their rows with FOR UPDATE SKIP LOCKED, so claimers
// never wait for each other; rows that several transactions may lock
// together (a worker's running jobs) are always locked in id order, so they
// cannot deadlock. A lost connection is re-opened on the next call (with
// backoff); the transaction it was in is rolled back by the server and its
// error is transient, so callers retry.
//
// Thread safety: all methods serialise on one mutex (one connection).
#pragma once

#include <memory>
#include <optional>
#include <random>
#include <string>

#include "core/mutex.h"
#include "store/claim_flow.h"
#include "store/job_action_row.h"
#include "store/postgres/pg_conn.h"
#include "store/store.h"

namespace warden::pg {

// The claim's pick for `p`: id, concurrency key, priority, run_at and
// whether it is safe to claim ahead (core/claim_ahead.h) of claimable jobs
// in claim order, at most $5, locked FOR UPDATE SKIP LOCKED. `now` is an SQL
// expression for the time; `from` adds tables (", w"). AddPickParams binds
// $1..$6: the time (NULL where the SQL reads the server's instead), the
// queue or queues, the tasks, whether commands run, the limit, the
// claimer's node (a job kept from it is left). Public for a test of how
// much of the backlog a pick reads.
// `capped_arms` (several queues, some limited: store/claim_flow.h): each
// queue's arm stops at its entry of $7::int[]. `exclude_blocked` (every
// queue): not the queues of $7::text[].
std::string PickSql(const ClaimParams& p, const std::string& now, const std::string& from,
                    bool capped_arms = false, bool exclude_blocked = false);
void AddPickParams(Params& params, const ClaimParams& p, std::optional<int64_t> now);

// Statements that look jobs up by id, public for a test of their plans:
// successes ($1 ids, $2 lease tokens, $3 results as JSON text or NULL, $4
// now), a worker's heartbeat ($1 now or NULL, $2 the worker) and the claim
// of picked jobs ($1 worker, $2 its lease, $3 now or NULL, $4 ids); and the
// sweep's look for an expired lease ($1 now), which must read the running
// jobs only.
// A listing's `FROM warden.jobs j WHERE ...` for `f` (its cursor aside),
// its values appended to `p`; PageWhere adds the cursor, and leaves the
// former in `common`.
std::string ListedWhere(const JobFilter& f, Params* p);
std::string PageWhere(const JobFilter& f, Params* p, std::string* common);
extern const char* const kSucceedManySql;
extern const char* const kHeartbeatSql;
extern const std::string kClaimPickedSql;
extern const char* const kJobLeasesSql;

class PgStore final : public Store {
 public:
  static Result<std::unique_ptr<Store>> Open(const std::string& url, StoreOptions options);

  Status Migrate() override;
  Result<int> SchemaVersion() override;
  Result<TimeMs> Now() override;
  Status CheckWritable() override;

  Result<std::vector<EnqueueResult>> JobInsertMany(std::span<const JobSpec> specs) override;
  Result<std::vector<JobInfo>> JobClaim(const ClaimParams& p) override;
  Result<bool> JobMarkStarted(JobRef ref) override;
  Result<std::vector<bool>> JobFinishMany(WorkerId worker,
                                          std::span<const JobOutcome> outcomes) override;
  Result<bool> JobCheckpoint(JobRef ref, const Json& checkpoint) override;
  Result<JobInfo> JobGet(JobId id) override;
  Result<std::vector<FencedWriteInfo>> JobFencedWrites(JobId id) override;
  Result<std::vector<JobInfo>> JobList(const JobFilter& f, int64_t* total) override;
  Status JobRetry(JobId id, const RetryOptions& retry, const AuditEntry& audit) override;
  Result<std::vector<JobActionInfo>> JobActions(JobId id) override;
  Status JobRunNow(JobId id, const AuditEntry& audit) override;
  Result<JobState> JobCancel(JobId id, const AuditEntry& audit) override;
  Result<int64_t> JobCountUnfinished() override;
  Result<std::optional<Millis>> JobNextDueIn() override;
  Result<std::vector<BacklogGroup>> JobBacklog(const std::vector<std::string>& queues) override;

  Result<WorkerId> WorkerRegister(const WorkerRegistration& r) override;
  Result<HeartbeatReply> WorkerHeartbeat(WorkerId id) override;
  Status WorkerSetDraining(WorkerId id) override;
  Status WorkerStop(WorkerId id) override;
  Result<std::vector<WorkerInfo>> WorkerList(bool live_only) override;
  Result<std::vector<WorkerLiveness>> WorkerListLive(const std::string& name) override;
  Result<RescueReport> WorkerDeclareDead(WorkerId id, const std::string& reason,
                                         LossCause cause, const AuditEntry* audit) override;
  Result<std::unique_ptr<WorkerSession>> OpenSession(WorkerId id, Millis lease) override;
  void NotifyWorkers() override;
  Result<int> WorkerMarkSilent(std::span<const WorkerLiveness> silent,
                               Millis silent_for) override;

  Result<bool> LeaderTryAcquire(const std::string& name, WorkerId holder, Millis ttl,
                                const std::optional<LeaderRow>& silent) override;
  Result<std::optional<LeaderRow>> LeaderRead(const std::string& name) override;
  Result<std::vector<LeaseRow>> JobLeases() override;
  Result<RescueReport> JobRescueSilent(std::span<const LeaseRow> silent) override;
  Result<int> JobExpire() override;
  Result<int> JobPromote() override;
  Result<int> Prune(Millis retention) override;
  Result<Stats> GetStats() override;
  Status WorkerPutMetrics(WorkerId id, const std::string& snapshot) override;
  Result<MetricSnapshot> MetricTotals() override;
  Status MetricsAdd(const MetricSnapshot& deltas) override;

  Result<bool> QueueSetPaused(const std::string& queue, bool paused,
                              const AuditEntry& audit) override;
  Result<std::vector<QueueInfo>> QueueList() override;
  Result<bool> QueueSetLimits(const std::string& queue, const QueueLimits& limits,
                              const AuditEntry& audit) override;
  Result<std::optional<QueueFlow>> QueueFlowOf(const std::string& queue) override;
  Result<std::vector<NodeInfo>> NodeList() override;
  Result<bool> NodePut(const NodeSpec& node, bool set_capacity, const AuditEntry& audit) override;
  Result<bool> NodeSetEnabled(const std::string& name, bool enabled,
                              const AuditEntry& audit) override;
  Result<bool> NodeRemove(const std::string& name, const AuditEntry& audit) override;
  Result<NodeSyncReport> NodeSync(std::span<const NodeSpec> inventory, bool dry_run,
                                  const AuditEntry& audit) override;
  Status JobCountsFold() override;
  Result<std::vector<JobCountDrift>> JobCountsVerify() override;
  Result<std::optional<TimeMs>> QueuePausedAt(const std::string& queue) override;
  Result<std::optional<JobId>> JobHoldingKey(const std::string& key) override;
  Result<TokenInfo> TokenInsert(const TokenInfo& t, std::optional<Millis> lifetime,
                                const std::string& hash, const AuditEntry& audit) override;
  Result<TokenFound> TokenFind(int64_t id) override;
  Status TokenTouch(int64_t id, TimeMs at) override;
  Result<std::vector<TokenInfo>> TokenList() override;
  Result<TokenInfo> TokenRevoke(const std::string& name_or_id, const AuditEntry& audit) override;
  Result<std::vector<AuditEntry>> AuditList(int limit, int64_t before) override;

  Status JobDelete(JobId id, const AuditEntry& audit) override;
  Result<BulkOp> BulkOpCreate(BulkAction action, const JobFilter& filter,
                              const std::string& actor, const RetryOptions& retry) override;
  Result<BulkOp> BulkOpGet(int64_t id) override;
  Result<std::vector<BulkOp>> BulkOpList(int limit) override;
  Result<std::optional<BulkOp>> BulkOpClaim(const std::string& owner, Millis lease,
                                                    int64_t id) override;
  Result<BulkOp> BulkOpStep(int64_t id, const std::string& owner, int batch,
                            Millis lease) override;
  Status BulkOpRelease(int64_t id, const std::string& owner) override;

 private:
  PgStore(std::string url, std::unique_ptr<Conn> conn, const Clock* fake_clock)
      : url_(std::move(url)), conn_(std::move(conn)), fake_clock_(fake_clock),
        rng_(std::random_device{}()) {}

  // Each REQUIRES mu_ held and, for writes, an open transaction (but
  // InsertBatchLocked, a single statement, which needs none).
  Result<TimeMs> NowLocked() REQUIRES(mu_);
  // Job counts (pg_store_counts.cc): folds the deltas (try-lock; a no-op
  // when another process folds), and the jobs by state.
  Status FoldLocked() REQUIRES(mu_);
  Result<std::vector<std::pair<std::string, int64_t>>> StateCountsLocked() REQUIRES(mu_);
  Status AuditLocked(const AuditEntry& audit, TimeMs now) REQUIRES(mu_);
  // The test clock's time, for statements that otherwise read the server's
  // (coalesce($n, warden.now_ms())).
  std::optional<int64_t> FakeNow() const {
    return fake_clock_ ? std::optional<int64_t>(fake_clock_->NowMs()) : std::nullopt;
  }
  // One INSERT of `count` jobs without unique keys, whose arrays
  // (BatchArrays, pg_store.cc) were built beforehand.
  Result<std::vector<EnqueueResult>> InsertBatchLocked(Params arrays, size_t count,
                                                       std::optional<TimeMs> now) REQUIRES(mu_);
  Result<EnqueueResult> InsertUniqueLocked(const JobSpec& spec, TimeMs now) REQUIRES(mu_);
  // A claim as one statement; nullopt (nothing claimed) where it needs
  // ClaimInTransactionLocked: due jobs to promote first, or concurrency keys.
  Result<std::optional<std::vector<JobInfo>>> ClaimInOneStatementLocked(const ClaimParams& p)
      REQUIRES(mu_);
  // Promotes due jobs, picks, locks the picked concurrency keys, claims.
  Result<std::vector<JobInfo>> ClaimInTransactionLocked(const ClaimParams& p) REQUIRES(mu_);
  Result<std::vector<JobId>> PickLocked(const ClaimParams& p, const ClaimFlow& flow, TimeMs now)
      REQUIRES(mu_);
  // In a claim's transaction, once the limit rows of its queues are
  // locked: what they allow now (store/claim_flow.h).
  Result<ClaimFlow> FlowLocked(const ClaimParams& p, TimeMs now) REQUIRES(mu_);
  // The registered nodes, locked FOR UPDATE (in name order) if asked.
  Result<std::vector<NodeInfo>> RegistryLocked(bool for_update) REQUIRES(mu_);
  // Records the claims of rate-limited queues among `claimed`.
  Status RecordStartsLocked(const ClaimFlow& flow, const std::vector<JobInfo>& claimed)
      REQUIRES(mu_);
  Result<int> PromoteDueLocked(TimeMs now) REQUIRES(mu_);
  // Applies a failed outcome (fenced). false: fenced off.
  // `rescued`, if given, learns what became of the job.
  Result<bool> FailLocked(const JobOutcome& o, TimeMs now, RescuedJob* rescued = nullptr)
      REQUIRES(mu_);
  // The node of `worker`, which lost or crashed a job of (queue, task,
  // command), if a claiming worker on another node can run it now
  // (core/node_preference.h).
  Result<std::optional<std::string>> NodeToAvoidLocked(WorkerId worker, const std::string& queue,
                                                       const std::string& task, bool command)
      REQUIRES(mu_);
  Status LogFenced(const JobRef& ref, WorkerId worker, const std::string& what, TimeMs now)
      REQUIRES(mu_);
  // Fails every running job of `worker` (or, worker 0, with an expired
  // lease) with kind `lost`.
  Result<RescueReport> RescueLocked(WorkerId worker, const std::string& message,
                                    LossCause cause, TimeMs now)
      REQUIRES(mu_);
  Result<std::vector<AttemptInfo>> AttemptsLocked(JobId id) REQUIRES(mu_);
  // The job's state, its row locked until the transaction ends.
  Result<JobState> LockJobStateLocked(JobId id) REQUIRES(mu_);
  // JobRetry's and JobCancel's change (the job locked, its state checked)
  // in the caller's transaction.
  Status RetryLocked(JobId id, TimeMs now, const ActionOrigin& origin) REQUIRES(mu_);
  Status CancelLocked(JobId id, JobState state, TimeMs now, const ActionOrigin& origin)
      REQUIRES(mu_);
  // The job_actions row of `action` on job `id`, from its row as it is now.
  Status JobActionLocked(JobId id, TimeMs now, const char* action, const ActionOrigin& origin)
      REQUIRES(mu_);
  Result<BulkOp> BulkOpGetLocked(int64_t id, bool for_update) REQUIRES(mu_);
  double Jitter() REQUIRES(mu_) { return std::uniform_real_distribution<double>(0, 1)(rng_); }

  Mutex mu_;
  const std::string url_;
  std::unique_ptr<Conn> conn_ PT_GUARDED_BY(mu_);  // one connection
  const Clock* fake_clock_;  // tests only
  std::mt19937_64 rng_ GUARDED_BY(mu_);
};

}  // namespace warden::pg
