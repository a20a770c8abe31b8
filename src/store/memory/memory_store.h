// The in-memory backend, `memory:NAME`: SqliteStore's semantics over std
// containers, for tests (the protocol simulation runs the real worker
// runtime on it) and for embedding where nothing needs to outlive the
// process.
//
// Every Store opened on one NAME in this process shares one database
// (memory_db.h), which lives until the last of them closes; other
// processes cannot see it. Each method is SqliteStore's transaction, in
// the same order and with the same conditions (store/sqlite/*.cc), held
// under the database's one mutex. The store's clock is the injected Clock
// (StoreOptions::database_clock if set, else StoreOptions::clock, else
// the system clock), as on SQLite: it writes times, never judges silence.
//
// Nothing is durable and there is no schema: Migrate does nothing and
// SchemaVersion is kSchemaVersion, the version of this row model.
//
// Thread safety: as every Store (store.h): all methods serialise on the
// database's mutex, shared by every Store opened on it.
#pragma once

#include <memory>
#include <string>

#include "store/claim_flow.h"
#include "store/memory/memory_db.h"
#include "store/store.h"

namespace warden::memory {

// What SchemaVersion reports: the row model of memory_rows.h (SQLite's
// schema 5 in C++). Nothing is migrated: a database never outlives the
// process that made it.
inline constexpr int kSchemaVersion = 1;

class MemoryStore final : public Store {
 public:
  // `name`: the database's name in this process (non-empty).
  static Result<std::unique_ptr<Store>> Open(const std::string& name, StoreOptions options);

  Status Migrate() override { return Status::Ok(); }
  Result<int> SchemaVersion() override { return kSchemaVersion; }
  Result<TimeMs> Now() override { return clock_->NowMs(); }
  Status CheckWritable() override { return Status::Ok(); }

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
  void NotifyWorkers() override { db_->wake->WakeAll(); }
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
  MemoryStore(std::shared_ptr<Database> db, const Clock* clock)
      : db_(std::move(db)), clock_(clock) {}

  // Each REQUIRES db_->mu held, as SqliteStore's *Locked helpers need its
  // transaction.
  // SqliteStore::NodeToAvoidLocked, for `job` as its worker lost it.
  std::optional<std::string> NodeToAvoidLocked(const JobRow& job) REQUIRES(db_->mu);
  // Applies a failed outcome (fenced). false: fenced off.
  // `rescued`, if given, learns what became of the job.
  bool FailLocked(const JobOutcome& o, TimeMs now, RescuedJob* rescued = nullptr)
      REQUIRES(db_->mu);
  bool SucceedLocked(const JobOutcome& o, TimeMs now) REQUIRES(db_->mu);
  // Fails every running job of `worker` with kind `lost`.
  RescueReport RescueWorkerLocked(WorkerId worker, const std::string& message,
                                  LossCause cause, TimeMs now)
      REQUIRES(db_->mu);
  std::optional<LeaderRow> LeaderReadLocked(const std::string& name) REQUIRES(db_->mu);
  // The running job `ref` names, if its token is still current.
  JobRow* FindRunningLocked(JobRef ref) REQUIRES(db_->mu);
  // Scheduled or retryable jobs due by `now`, and making them available.
  bool AnyDueLocked(TimeMs now) REQUIRES(db_->mu);
  int PromoteDueLocked(TimeMs now) REQUIRES(db_->mu);
  // The claimable jobs of `p` in claim order (priority, then run_at, then
  // id), before one-per-key and claim-ahead (PickLocked).
  std::vector<JobRow*> ClaimableLocked(const ClaimParams& p, const ClaimFlow& flow, TimeMs now)
      REQUIRES(db_->mu);
  // Of `claimable`, those a claim takes: at most p.limit, one per
  // concurrency key, the last p.ahead only if safe to claim ahead, as many
  // of each limited queue as `flow` allows.
  static std::vector<JobRow*> Pick(const ClaimParams& p, const ClaimFlow& flow,
                                   std::span<JobRow* const> claimable);
  // SqliteStore::FlowLocked: the claim less its paused queues and limited
  // queues without room; false: nothing left. Drops claims older than a
  // rate window.
  // The claiming worker's node into `flow` (ApplyNode, store/claim_flow.h).
  void NodeOfClaimLocked(WorkerId worker, ClaimFlow* flow) REQUIRES(db_->mu);
  bool FlowLocked(const ClaimParams& p, TimeMs now, ClaimParams* narrowed, ClaimFlow* flow)
      REQUIRES(db_->mu);
  // JobRetry's and JobCancel's change, their lock held.
  // Each keeps its JobActionInfo with the job (`actor`; `op`: the bulk
  // operation, 0 for none).
  Status RetryLocked(JobId id, TimeMs now, const std::string& actor, int64_t op, bool fresh)
      REQUIRES(db_->mu);
  Result<JobState> CancelLocked(JobId id, TimeMs now, const std::string& actor, int64_t op)
      REQUIRES(db_->mu);
  double Jitter() REQUIRES(db_->mu) {
    return std::uniform_real_distribution<double>(0, 1)(db_->rng);
  }

  const std::shared_ptr<Database> db_;
  const Clock* clock_;
};

}  // namespace warden::memory
