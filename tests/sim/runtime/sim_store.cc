#include "sim_store.h"

#include "store/memory/memory_session.h"

namespace warden::sim {

void SimLink::Cut(VirtUs until) {
  if (!cut()) cut_from = sched.now();
  cut_until = std::max(cut_until, until);
  const VirtUs from = cut_from;
  for (SimSession* s : sessions) {
    const VirtUs at = from + s->keepalive();
    if (at >= cut_until) continue;  // back before the server gives up
    sched.At(at, [this, s, from] {
      if (sessions.count(s) && cut() && cut_from == from) s->Drop();
    });
  }
}

void SimLink::ResetSessions(VirtUs reconnected_at) {
  sessions_down_until = std::max(sessions_down_until, reconnected_at);
  for (SimSession* s : sessions) s->Drop();
}

SimSession::SimSession(std::unique_ptr<WorkerSession> inner, SimLink& link, Millis lease)
    : inner_(std::move(inner)), link_(link), lease_(lease) {
  link_.sessions.insert(this);
}

SimSession::~SimSession() {
  link_.sessions.erase(this);
  if (!link_.power_lost) return;  // closed: the lock goes at once
  WorkerSession* left = inner_.get();
  link_.abandoned.push_back(std::move(inner_));
  link_.sched.At(link_.sched.now() + keepalive(), [left] {
    if (auto* m = dynamic_cast<memory::MemorySession*>(left)) m->ServerDrops();
  });
}

Result<bool> SimSession::Drain() {
  if (link_.sessions_down()) return Unavailable("sim: session: connection cut off or reset");
  return inner_->Drain();
}

Status SimSession::KeepAliveFor(Millis lease) {
  // Set over the connection (PgSession): a cut one does not reach the server.
  if (link_.cut()) return Unavailable("sim: session: connection cut off");
  lease_ = std::max(lease_, lease);
  return inner_->KeepAliveFor(lease);
}

VirtUs SimSession::keepalive() const {
  const int64_t idle_s = std::max<int64_t>(5, (lease_.count() + 999) / 1000);
  return (idle_s + 3 * 2) * 1'000'000;
}

void SimSession::Drop() {
  if (auto* m = dynamic_cast<memory::MemorySession*>(inner_.get())) m->ServerDrops();
}

bool SimStore::Travel(VirtUs deadline) {
  Scheduler& sched = link_.sched;
  const VirtUs delay = link_.rng.Range(link_.min_delay, link_.max_delay);
  // A killed process's threads only unwind, in no virtual time: waiting
  // here would hold its others racing 1 µs a turn (sim_env.h).
  if (!link_.killed) sched.Park(sched.now() + delay);
  while (link_.cut_until > sched.now() && !link_.killed) {
    if (sched.now() >= deadline) return false;
    sched.Park(std::min(link_.cut_until, deadline));
  }
  return true;
}

template <typename R, typename F>
R SimStore::Call(const char* method, F apply) {
  ++link_.calls;
  if (link_.killed) return R(Unavailable(std::string("sim: ") + method + ": process killed"));
  const VirtUs deadline = link_.sched.now() + link_.call_timeout;
  if (!Travel(deadline)) {
    return R(Unavailable(std::string("sim: ") + method + ": timed out, cut off; not sent"));
  }
  if (link_.work_time && !link_.killed) {
    if (const VirtUs t = link_.work_time(method); t > 0) link_.sched.Park(link_.sched.now() + t);
  }
  R result = apply();
  if (link_.after_call) link_.after_call(method);
  const bool back = Travel(deadline);
  if (!back || link_.killed || (link_.lose_reply && link_.lose_reply(method)) ||
      link_.rng.Percent(link_.lose_reply_percent)) {
    ++link_.replies_lost;
    return R(Unavailable(std::string("sim: ") + method + ": reply lost"));
  }
  if (link_.on_reply) link_.on_reply(method);
  return result;
}

Status SimStore::Migrate() {
  return Call<Status>("Migrate", [&] { return inner_->Migrate(); });
}

Result<int> SimStore::SchemaVersion() {
  return Call<Result<int>>("SchemaVersion", [&] { return inner_->SchemaVersion(); });
}

Result<TimeMs> SimStore::Now() {
  return Call<Result<TimeMs>>("Now", [&] { return inner_->Now(); });
}

Status SimStore::CheckWritable() {
  return Call<Status>("CheckWritable", [&] { return inner_->CheckWritable(); });
}

Result<std::vector<EnqueueResult>> SimStore::JobInsertMany(std::span<const JobSpec> specs) {
  return Call<Result<std::vector<EnqueueResult>>>("JobInsertMany",
                                                  [&] { return inner_->JobInsertMany(specs); });
}

Result<std::vector<JobInfo>> SimStore::JobClaim(const ClaimParams& p) {
  return Call<Result<std::vector<JobInfo>>>("JobClaim", [&] { return inner_->JobClaim(p); });
}

Result<bool> SimStore::JobMarkStarted(JobRef ref) {
  return Call<Result<bool>>("JobMarkStarted", [&] { return inner_->JobMarkStarted(ref); });
}

Result<std::vector<bool>> SimStore::JobFinishMany(WorkerId worker,
                                                  std::span<const JobOutcome> outcomes) {
  return Call<Result<std::vector<bool>>>("JobFinishMany",
                                         [&] { return inner_->JobFinishMany(worker, outcomes); });
}

Result<bool> SimStore::JobCheckpoint(JobRef ref, const Json& checkpoint) {
  return Call<Result<bool>>("JobCheckpoint",
                            [&] { return inner_->JobCheckpoint(ref, checkpoint); });
}

Result<std::vector<FencedWriteInfo>> SimStore::JobFencedWrites(JobId id) {
  return Call<Result<std::vector<FencedWriteInfo>>>("JobFencedWrites",
                                                    [&] { return inner_->JobFencedWrites(id); });
}

Result<JobInfo> SimStore::JobGet(JobId id) {
  return Call<Result<JobInfo>>("JobGet", [&] { return inner_->JobGet(id); });
}

Result<std::vector<JobInfo>> SimStore::JobList(const JobFilter& f, int64_t* total) {
  return Call<Result<std::vector<JobInfo>>>("JobList", [&] { return inner_->JobList(f, total); });
}

Status SimStore::JobRetry(JobId id, const RetryOptions& retry, const AuditEntry& audit) {
  return Call<Status>("JobRetry", [&] { return inner_->JobRetry(id, retry, audit); });
}

Result<std::vector<JobActionInfo>> SimStore::JobActions(JobId id) {
  return Call<Result<std::vector<JobActionInfo>>>("JobActions",
                                                  [&] { return inner_->JobActions(id); });
}

Status SimStore::JobRunNow(JobId id, const AuditEntry& audit) {
  return Call<Status>("JobRunNow", [&] { return inner_->JobRunNow(id, audit); });
}

Result<JobState> SimStore::JobCancel(JobId id, const AuditEntry& audit) {
  return Call<Result<JobState>>("JobCancel", [&] { return inner_->JobCancel(id, audit); });
}

Result<int64_t> SimStore::JobCountUnfinished() {
  return Call<Result<int64_t>>("JobCountUnfinished", [&] { return inner_->JobCountUnfinished(); });
}

Result<std::optional<Millis>> SimStore::JobNextDueIn() {
  return Call<Result<std::optional<Millis>>>("JobNextDueIn",
                                             [&] { return inner_->JobNextDueIn(); });
}

Result<std::vector<BacklogGroup>> SimStore::JobBacklog(const std::vector<std::string>& queues) {
  return Call<Result<std::vector<BacklogGroup>>>("JobBacklog",
                                                 [&] { return inner_->JobBacklog(queues); });
}

Result<WorkerId> SimStore::WorkerRegister(const WorkerRegistration& r) {
  return Call<Result<WorkerId>>("WorkerRegister", [&] { return inner_->WorkerRegister(r); });
}

Result<HeartbeatReply> SimStore::WorkerHeartbeat(WorkerId id) {
  return Call<Result<HeartbeatReply>>("WorkerHeartbeat",
                                      [&] { return inner_->WorkerHeartbeat(id); });
}

Status SimStore::WorkerSetDraining(WorkerId id) {
  return Call<Status>("WorkerSetDraining", [&] { return inner_->WorkerSetDraining(id); });
}

Status SimStore::WorkerStop(WorkerId id) {
  return Call<Status>("WorkerStop", [&] { return inner_->WorkerStop(id); });
}

Result<std::vector<WorkerInfo>> SimStore::WorkerList(bool live_only) {
  return Call<Result<std::vector<WorkerInfo>>>("WorkerList",
                                               [&] { return inner_->WorkerList(live_only); });
}

Result<std::vector<WorkerLiveness>> SimStore::WorkerListLive(const std::string& name) {
  return Call<Result<std::vector<WorkerLiveness>>>("WorkerListLive",
                                                   [&] { return inner_->WorkerListLive(name); });
}

Result<RescueReport> SimStore::WorkerDeclareDead(WorkerId id, const std::string& reason,
                                                 LossCause cause, const AuditEntry* audit) {
  return Call<Result<RescueReport>>(
      "WorkerDeclareDead", [&] { return inner_->WorkerDeclareDead(id, reason, cause, audit); });
}

Result<std::unique_ptr<WorkerSession>> SimStore::OpenSession(WorkerId id, Millis lease) {
  WARDEN_ASSIGN_OR_RETURN(auto inner,
                          Call<Result<std::unique_ptr<WorkerSession>>>(
                              "OpenSession", [&] { return inner_->OpenSession(id, lease); }));
  return std::unique_ptr<WorkerSession>(
      std::make_unique<SimSession>(std::move(inner), link_, lease));
}

void SimStore::NotifyWorkers() {
  if (!link_.killed) inner_->NotifyWorkers();
}

Result<int> SimStore::WorkerMarkSilent(std::span<const WorkerLiveness> silent, Millis silent_for) {
  return Call<Result<int>>("WorkerMarkSilent",
                           [&] { return inner_->WorkerMarkSilent(silent, silent_for); });
}

Result<bool> SimStore::LeaderTryAcquire(const std::string& name, WorkerId holder, Millis ttl,
                                        const std::optional<LeaderRow>& silent) {
  return Call<Result<bool>>("LeaderTryAcquire",
                            [&] { return inner_->LeaderTryAcquire(name, holder, ttl, silent); });
}

Result<std::optional<LeaderRow>> SimStore::LeaderRead(const std::string& name) {
  return Call<Result<std::optional<LeaderRow>>>("LeaderRead",
                                                [&] { return inner_->LeaderRead(name); });
}

Result<std::vector<LeaseRow>> SimStore::JobLeases() {
  return Call<Result<std::vector<LeaseRow>>>("JobLeases", [&] { return inner_->JobLeases(); });
}

Result<RescueReport> SimStore::JobRescueSilent(std::span<const LeaseRow> silent) {
  return Call<Result<RescueReport>>("JobRescueSilent",
                                    [&] { return inner_->JobRescueSilent(silent); });
}

Result<int> SimStore::JobExpire() {
  return Call<Result<int>>("JobExpire", [&] { return inner_->JobExpire(); });
}

Result<int> SimStore::JobPromote() {
  return Call<Result<int>>("JobPromote", [&] { return inner_->JobPromote(); });
}

Result<int> SimStore::Prune(Millis retention) {
  return Call<Result<int>>("Prune", [&] { return inner_->Prune(retention); });
}

Result<Stats> SimStore::GetStats() {
  return Call<Result<Stats>>("GetStats", [&] { return inner_->GetStats(); });
}

Status SimStore::WorkerPutMetrics(WorkerId id, const std::string& snapshot) {
  return Call<Status>("WorkerPutMetrics", [&] { return inner_->WorkerPutMetrics(id, snapshot); });
}

Result<MetricSnapshot> SimStore::MetricTotals() {
  return Call<Result<MetricSnapshot>>("MetricTotals", [&] { return inner_->MetricTotals(); });
}

Status SimStore::MetricsAdd(const MetricSnapshot& deltas) {
  return Call<Status>("MetricsAdd", [&] { return inner_->MetricsAdd(deltas); });
}

// The operator surface, over the same link.
Result<bool> SimStore::QueueSetPaused(const std::string& queue, bool paused,
                                      const AuditEntry& audit) {
  return Call<Result<bool>>("QueueSetPaused",
                            [&] { return inner_->QueueSetPaused(queue, paused, audit); });
}

Status SimStore::JobCountsFold() {
  return Call<Status>("JobCountsFold", [&] { return inner_->JobCountsFold(); });
}

Result<std::vector<JobCountDrift>> SimStore::JobCountsVerify() {
  return Call<Result<std::vector<JobCountDrift>>>("JobCountsVerify",
                                                   [&] { return inner_->JobCountsVerify(); });
}

Result<std::vector<QueueInfo>> SimStore::QueueList() {
  return Call<Result<std::vector<QueueInfo>>>("QueueList", [&] { return inner_->QueueList(); });
}

Result<bool> SimStore::QueueSetLimits(const std::string& queue, const QueueLimits& limits,
                                      const AuditEntry& audit) {
  return Call<Result<bool>>("QueueSetLimits",
                            [&] { return inner_->QueueSetLimits(queue, limits, audit); });
}

Result<std::optional<QueueFlow>> SimStore::QueueFlowOf(const std::string& queue) {
  return Call<Result<std::optional<QueueFlow>>>("QueueFlowOf",
                                                [&] { return inner_->QueueFlowOf(queue); });
}

Result<std::vector<NodeInfo>> SimStore::NodeList() {
  return Call<Result<std::vector<NodeInfo>>>("NodeList", [&] { return inner_->NodeList(); });
}

Result<bool> SimStore::NodePut(const NodeSpec& node, bool set_capacity, const AuditEntry& audit) {
  return Call<Result<bool>>("NodePut", [&] { return inner_->NodePut(node, set_capacity, audit); });
}

Result<bool> SimStore::NodeSetEnabled(const std::string& name, bool enabled,
                                      const AuditEntry& audit) {
  return Call<Result<bool>>("NodeSetEnabled",
                            [&] { return inner_->NodeSetEnabled(name, enabled, audit); });
}

Result<bool> SimStore::NodeRemove(const std::string& name, const AuditEntry& audit) {
  return Call<Result<bool>>("NodeRemove", [&] { return inner_->NodeRemove(name, audit); });
}

Result<NodeSyncReport> SimStore::NodeSync(std::span<const NodeSpec> inventory, bool dry_run,
                                          const AuditEntry& audit) {
  return Call<Result<NodeSyncReport>>(
      "NodeSync", [&] { return inner_->NodeSync(inventory, dry_run, audit); });
}

Result<std::optional<TimeMs>> SimStore::QueuePausedAt(const std::string& queue) {
  return Call<Result<std::optional<TimeMs>>>("QueuePausedAt",
                                             [&] { return inner_->QueuePausedAt(queue); });
}

Result<std::optional<JobId>> SimStore::JobHoldingKey(const std::string& key) {
  return Call<Result<std::optional<JobId>>>("JobHoldingKey",
                                            [&] { return inner_->JobHoldingKey(key); });
}

Result<TokenInfo> SimStore::TokenInsert(const TokenInfo& t, std::optional<Millis> lifetime,
                                        const std::string& hash,
                                        const AuditEntry& audit) {
  return Call<Result<TokenInfo>>("TokenInsert",
                                 [&] { return inner_->TokenInsert(t, lifetime, hash, audit); });
}

Result<TokenFound> SimStore::TokenFind(int64_t id) {
  return Call<Result<TokenFound>>("TokenFind", [&] { return inner_->TokenFind(id); });
}

Status SimStore::TokenTouch(int64_t id, TimeMs at) {
  return Call<Status>("TokenTouch", [&] { return inner_->TokenTouch(id, at); });
}

Result<std::vector<TokenInfo>> SimStore::TokenList() {
  return Call<Result<std::vector<TokenInfo>>>("TokenList", [&] { return inner_->TokenList(); });
}

Result<TokenInfo> SimStore::TokenRevoke(const std::string& name_or_id, const AuditEntry& audit) {
  return Call<Result<TokenInfo>>("TokenRevoke",
                                 [&] { return inner_->TokenRevoke(name_or_id, audit); });
}

Result<std::vector<AuditEntry>> SimStore::AuditList(int limit, int64_t before) {
  return Call<Result<std::vector<AuditEntry>>>("AuditList",
                                               [&] { return inner_->AuditList(limit, before); });
}

Status SimStore::JobDelete(JobId id, const AuditEntry& audit) {
  return Call<Status>("JobDelete", [&] { return inner_->JobDelete(id, audit); });
}

Result<BulkOp> SimStore::BulkOpCreate(BulkAction action, const JobFilter& filter,
                                      const std::string& actor, const RetryOptions& retry) {
  return Call<Result<BulkOp>>(
      "BulkOpCreate", [&] { return inner_->BulkOpCreate(action, filter, actor, retry); });
}

Result<BulkOp> SimStore::BulkOpGet(int64_t id) {
  return Call<Result<BulkOp>>("BulkOpGet", [&] { return inner_->BulkOpGet(id); });
}

Result<std::vector<BulkOp>> SimStore::BulkOpList(int limit) {
  return Call<Result<std::vector<BulkOp>>>("BulkOpList", [&] { return inner_->BulkOpList(limit); });
}

Result<std::optional<BulkOp>> SimStore::BulkOpClaim(const std::string& owner, Millis lease,
                                                    int64_t id) {
  return Call<Result<std::optional<BulkOp>>>(
      "BulkOpClaim", [&] { return inner_->BulkOpClaim(owner, lease, id); });
}

Result<BulkOp> SimStore::BulkOpStep(int64_t id, const std::string& owner, int batch,
                                    Millis lease) {
  return Call<Result<BulkOp>>("BulkOpStep",
                              [&] { return inner_->BulkOpStep(id, owner, batch, lease); });
}

Status SimStore::BulkOpRelease(int64_t id, const std::string& owner) {
  return Call<Status>("BulkOpRelease", [&] { return inner_->BulkOpRelease(id, owner); });
}

}  // namespace warden::sim
