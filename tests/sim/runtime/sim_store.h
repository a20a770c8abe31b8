// SimStore: a store as one simulated process reaches it (sim_env.h). Each
// call travels to the store and its reply back, each way a delay of the
// link's drawn in virtual time (the calling thread parks meanwhile, as a
// real one blocks on its socket); a reply can be lost after the call took
// effect (the caller sees a transient error, as at a timeout). A link cut
// off holds calls and replies until it heals, or until the call's timeout
// (PostgreSQL's tcp_user_timeout): a call that never left has no effect, a
// reply that never came is lost. Once its
// process is killed, a call not yet sent has no effect and fails; one in
// flight still lands, and its reply is lost.
//
// Thread safety: called by the thread holding the Scheduler's baton.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "prng.h"
#include "scheduler.h"
#include "store/store.h"

namespace warden::sim {

class SimSession;

// One process's line to the store, shared by its connections.
struct SimLink {
  explicit SimLink(Scheduler& s, uint64_t seed) : sched(s), rng(seed) {}
  Scheduler& sched;
  Rng rng;
  VirtUs min_delay = 50, max_delay = 500;  // each way, µs
  VirtUs cut_until = -1;                   // a partition, until then
  VirtUs cut_from = -1;                    // since then (while cut)
  VirtUs call_timeout = 10'000'000;
  // Its host lost power: its sessions are not closed but left to the
  // server, which drops them at their keepalive.
  bool power_lost = false;
  std::set<SimSession*> sessions;  // open now
  std::vector<std::unique_ptr<WorkerSession>> abandoned;  // by a power loss

  // Its sessions' connections reset: locks dropped at once, reconnecting
  // (fd -1, Drain failing) until then, though calls go through.
  VirtUs sessions_down_until = -1;

  bool cut() const { return cut_until > sched.now(); }
  bool sessions_down() const { return cut() || sessions_down_until > sched.now(); }
  void ResetSessions(VirtUs reconnected_at);
  // Cut off until `until`: calls and replies wait (SimStore), and each
  // session whose keepalive runs out meanwhile is dropped by the server.
  void Cut(VirtUs until);
  bool killed = false;
  int lose_reply_percent = 0;
  // Asked after each call that took effect: true loses its reply.
  std::function<bool(const std::string& method)> lose_reply;
  // How long the store takes to carry out a call of `method` (a slow
  // commit: an fsync, a loaded server), in virtual time before it takes
  // effect; null: none.
  std::function<VirtUs(const std::string& method)> work_time;
  // Called after each call took effect, as the store has it then.
  std::function<void(const std::string& method)> after_call;
  // Called as each reply that arrives reaches its caller (the caller's
  // thread still runs: a freeze here stops the process just after).
  std::function<void(const std::string& method)> on_reply;
  int64_t calls = 0, replies_lost = 0;
};

// A worker's session as its process reaches the store: down while its link
// is cut (fd -1, Drain fails; the worker retries), its lock dropped by the
// server once the link stays cut for the session's keepalive (as
// PgSession sets it: max(5 s, the longest lease) of silence, then 3 probes
// 2 s apart), and, when its host loses power, left open for the server to
// drop at that keepalive rather than closed at once. (Lock drops need a
// memory store made with StoreOptions::memory_session_proofs.)
class SimSession final : public WorkerSession {
 public:
  SimSession(std::unique_ptr<WorkerSession> inner, SimLink& link, Millis lease);
  ~SimSession() override;
  SimSession(const SimSession&) = delete;
  SimSession& operator=(const SimSession&) = delete;

  int fd() override { return link_.sessions_down() ? -1 : inner_->fd(); }
  Result<bool> Drain() override;
  Status KeepAliveFor(Millis lease) override;
  bool LossProvesDeath() const override { return inner_->LossProvesDeath(); }
  bool Holds() const override { return inner_->Holds(); }

  VirtUs keepalive() const;
  // The server gives the session up.
  void Drop();

 private:
  std::unique_ptr<WorkerSession> inner_;
  SimLink& link_;
  Millis lease_;
};

class SimStore : public Store {
 public:
  SimStore(std::unique_ptr<Store> inner, SimLink& link) : inner_(std::move(inner)), link_(link) {}

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
                                const std::string& hash,
                                const AuditEntry& audit) override;
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
  // The call `apply` as `method` over the link.
  template <typename R, typename F>
  R Call(const char* method, F apply);
  // One way, after the link's delay and while it is cut; false: not
  // across by `deadline`.
  bool Travel(VirtUs deadline);

  std::unique_ptr<Store> inner_;
  SimLink& link_;
};

}  // namespace warden::sim
