// The embedded SQLite backend: one file, many processes on one host.
//
// WAL mode; by default an acknowledged write survives power loss (each
// commit's WAL frames are synced before the call returns, after the write
// lock is released: Db::SyncCommitsAfterUnlock). Every write runs in a
// BEGIN IMMEDIATE transaction, so writers
// serialise on the file lock and a conditional UPDATE is all a claim needs.
// The store's clock is the injected Clock: on one host every process reads
// the same wall clock.
//
// Thread safety: all methods serialise on one mutex (one connection).
#pragma once

#include <memory>
#include <random>
#include <string>

#include "core/mutex.h"
#include "store/claim_flow.h"
#include "store/job_action_row.h"
#include "store/sqlite/job_counts.h"
#include "store/sqlite/sqlite_db.h"
#include "store/store.h"

namespace warden::sqlite {

// The claim's SELECT for `p`: its claimable jobs in claim order (priority,
// then run_at, then id). Public for a test of its query plan.
// `capped_arms`: a claim of several queues, some limited (claim_flow.h):
// each queue's arm stops at a bound parameter. `exclude_blocked`: a claim
// of every queue leaves out the queues of a bound JSON list.
std::string PickSql(const ClaimParams& p, bool capped_arms = false, bool exclude_blocked = false);
// Whether `p` has a claimable job: the look before a claim takes the lock.
std::string AnyClaimableSql(const ClaimParams& p, bool exclude_blocked = false);

// Reads whose plans depend on jobs_state leaving running and available
// jobs out (migrations/sqlite/0003_*.sql). Public, like PickSql, for a test of their query plans.
// `count`: with a last column of how many jobs match in all (JobList's total).
std::string JobListSql(const JobFilter& f, bool count);
// The count of every job `f` matches, cursor aside (one value).
std::string JobCountSql(const JobFilter& f);
// The ids of the jobs `f` matches, newest first, at most ?1, read down the
// table from the cursor (the rowid), never through a state's index: a bulk
// operation's batches, whose cursor only goes down, so all of them
// together read each row once. Bound as BindListing binds `f` without its
// states (they are in the SQL).
std::string JobScanIdsSql(const JobFilter& f);
// Binds the parameters of the three above (the limit too, unless not).
void BindListing(Stmt& q, const JobFilter& f, bool with_limit);
// Reads of job_counts (schema 9), never of every job: (state, count) of the
// states in use; the unfinished jobs; (queue, state, count, oldest
// available run_at) of the queues in use.
extern const char* const kJobCountsSql;
extern const char* const kCountUnfinishedSql;
extern const char* const kQueueCountsSql;
// The batch writes of a claim and of plain successes (see JobClaim and
// SucceedPlainLocked): each job found by its id, never by a scan.
extern const char* const kClaimSql;
extern const char* const kFencePlainSql;
extern const std::string kReadClaimedSql;  // a claim's jobs, read after its commit
extern const char* const kSucceedPlainSql;

class SqliteStore final : public Store {
 public:
  static Result<std::unique_ptr<Store>> Open(const std::string& path, StoreOptions options);

  Status Migrate() override;
  Result<int> SchemaVersion() override;
  Result<TimeMs> Now() override { return clock_->NowMs(); }
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
  SqliteStore(std::unique_ptr<Db> db, const Clock* clock, std::string wake_dir)
      : db_(std::move(db)), clock_(clock), wake_dir_(std::move(wake_dir)),
        rng_(std::random_device{}()) {}

  // Each REQUIRES mu_ held and, for writes, an open transaction.
  // Applies a failed outcome (fenced). false: fenced off.
  // `rescued`, if given, learns what became of the job.
  Result<bool> FailLocked(WorkerId worker, const JobOutcome& o, TimeMs now,
                          RescuedJob* rescued = nullptr) REQUIRES(mu_);
  // The node of `worker`, which lost or crashed a job of `group`, if a
  // claiming worker on another node can run it now (core/node_preference.h).
  Result<std::optional<std::string>> NodeToAvoidLocked(WorkerId worker, const JobGroup& group)
      REQUIRES(mu_);
  // Successes add their moves to `counts` (job_counts.h), for the caller
  // to apply with the batch; a failure applies its own.
  Result<bool> SucceedLocked(const JobOutcome& o, TimeMs now, CountChanges* counts)
      REQUIRES(mu_);
  // A batch's successes without a result (see FindPlainSuccesses).
  struct PlainSuccesses {
    std::vector<std::pair<JobId, size_t>> places;  // (id, place in the batch), by id
    std::string ids;                               // their job ids, as a JSON list
  };
  static PlainSuccesses FindPlainSuccesses(std::span<const JobOutcome> outcomes);
  Status SucceedPlainLocked(std::span<const JobOutcome> outcomes, const PlainSuccesses& plain,
                            TimeMs now, std::vector<bool>* accepted, CountChanges* counts)
      REQUIRES(mu_);
  Status LogFenced(const JobRef& ref, WorkerId worker, const char* what, TimeMs now) REQUIRES(mu_);
  // Fails every running job that `where` selects with kind `lost`.
  Result<std::optional<LeaderRow>> LeaderReadLocked(const std::string& name) REQUIRES(mu_);
  Result<RescueReport> RescueLocked(const std::string& where, int64_t arg,
                                    const std::string& message, LossCause cause,
                                    TimeMs now) REQUIRES(mu_);
  Result<std::vector<AttemptInfo>> AttemptsLocked(const JobInfo& job,
                                                  std::optional<TimeMs> started_at) REQUIRES(mu_);
  // A job chosen by a claim, and its lease token before the claim.
  struct Picked {
    JobId id;
    int64_t lease_token;
    JobGroup group;
  };
  // Claimable jobs in claim order, at most `limit`, one per concurrency key,
  // as many of each limited queue as `flow` allows.
  Result<std::vector<Picked>> PickLocked(const ClaimParams& p, const ClaimFlow& flow, TimeMs now,
                                         int limit) REQUIRES(mu_);
  // The jobs of a committed claim, in claim order: those still this claim's.
  Result<std::vector<JobInfo>> ReadClaimedLocked(WorkerId worker, std::span<const Picked> picked,
                                                 const std::string& id_list) REQUIRES(mu_);
  // The claim less its paused queues and its limited queues without room,
  // in `narrowed`, and what the limited ones with room allow, in `flow`
  // (store/claim_flow.h). false: nothing it names may be claimed now.
  // `prune`: in a write transaction, drop claims older than a rate window.
  Result<bool> FlowLocked(const ClaimParams& p, TimeMs now, bool prune, ClaimParams* narrowed,
                          ClaimFlow* flow) REQUIRES(mu_);
  // The registered nodes (NodeList's first part).
  Result<std::vector<NodeInfo>> RegistryLocked() REQUIRES(mu_);
  // The claiming worker's registry row, as FlowLocked reads it.
  struct NodeRow {
    std::string name;
    bool takes_work = true;  // present and enabled
    std::optional<int64_t> capacity;
  };
  // `node` into `flow` (ApplyNode, store/claim_flow.h), with the jobs
  // running on its workers when it has a capacity.
  Status ApplyNodeLocked(const NodeRow& node, ClaimFlow* flow) REQUIRES(mu_);
  // Records the claims of rate-limited queues among `picked`, at `now`.
  Status RecordStartsLocked(const ClaimFlow& flow, std::span<const Picked> picked, TimeMs now)
      REQUIRES(mu_);
  // Whether PickLocked would find a job, without reading one.
  Result<bool> AnyClaimableLocked(const ClaimParams& p, const ClaimFlow& flow, TimeMs now)
      REQUIRES(mu_);
  // Scheduled or retryable jobs due by `now`, and making them available.
  Result<bool> AnyDueLocked(TimeMs now) REQUIRES(mu_);
  Result<int> PromoteDueLocked(TimeMs now) REQUIRES(mu_);
  Status AuditLocked(const AuditEntry& audit, TimeMs now) REQUIRES(mu_);
  // SELECT EXISTS (sql) with one parameter.
  Result<bool> ExistsLocked(const std::string& sql, int64_t arg) REQUIRES(mu_);
  // JobRetry's and JobCancel's change in the caller's transaction.
  // A job's state and the group its count is kept under; NotFound if there is none.
  struct StateAndGroup {
    JobState state;
    JobGroup group;
  };
  Result<StateAndGroup> JobStateAndGroupLocked(JobId id) REQUIRES(mu_);
  Status RetryLocked(JobId id, TimeMs now, const ActionOrigin& origin) REQUIRES(mu_);
  Result<JobState> CancelLocked(JobId id, TimeMs now, const ActionOrigin& origin)
      REQUIRES(mu_);
  // The job_actions row of `action` on job `id`, from its row as it is now.
  Status JobActionLocked(JobId id, TimeMs now, const char* action, const ActionOrigin& origin)
      REQUIRES(mu_);
  Status DeleteLocked(JobId id) REQUIRES(mu_);
  Result<BulkOp> BulkOpGetLocked(int64_t id) REQUIRES(mu_);
  double Jitter() REQUIRES(mu_) { return std::uniform_real_distribution<double>(0, 1)(rng_); }

  Mutex mu_;
  std::unique_ptr<Db> db_ PT_GUARDED_BY(mu_);  // one connection
  const Clock* clock_;
  const std::string wake_dir_;  // see wake_socket.h
  std::mt19937_64 rng_ GUARDED_BY(mu_);
};

}  // namespace warden::sqlite
