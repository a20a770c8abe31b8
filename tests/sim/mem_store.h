// MemStore: the job/worker state machine of src/store/sqlite (and of the
// PostgreSQL store, which passes the same conformance suite) held in memory,
// one operation at a time. Each method mirrors one Store method and keeps
// its WHERE clauses: claims set a fresh lease token and honour
// concurrency keys, every write a worker makes about a job is fenced by
// (id, lease_token), heartbeats extend the leases of the worker's running
// jobs, rescues decide through core/retry.h (DecideFailure) exactly as the
// real stores do.
//
// Time is passed in (`now`, the store's wall clock, which steps). As in the
// real stores it only writes leases and heartbeats, never judges them: the
// workers judge silence by watching rows stay unchanged (core/silence.h) and
// the store carries out each verdict only while the row is still as judged.
// Deliberate bugs (Mutation) live here and in the worker model only.
//
// An observer hears of the facts the invariant checks need (accepted
// writes and their tokens, jobs taken from a lease holder), independently
// of whether a mutation skipped a check.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/retry.h"
#include "prng.h"
#include "sim_options.h"
#include "store/store.h"

namespace warden::sim {

struct MemJob {
  JobId id = 0;
  JobState state = JobState::kAvailable;
  int attempt = 0, charged = 0, crashes = 0;
  int max_attempts = 1, max_crashes = 3;
  RetryPolicy retry = RetryPolicy::kDefault;
  Delivery delivery = Delivery::kAtLeastOnce;
  std::optional<int64_t> lease_ms;  // per job; else the claimer's default
  int64_t active_lease_ms = 0;      // the lease of the current attempt
  std::string concurrency_key;
  int priority = 0;
  WorkerId worker = 0;
  int64_t lease_token = 0;
  TimeMs claimed_at = 0;
  std::optional<TimeMs> lease_expires_at;
  WorkerId extended_by = 0;  // whose heartbeat last extended the lease (for the checks)
  TimeMs run_at = 0;
  std::optional<TimeMs> start_deadline_at;
  bool started_mark = false;
  bool cancel_requested = false;
  std::optional<TimeMs> finished_at;
  std::optional<ErrorKind> last_error;
  Millis timeout{0};
  int64_t checkpoint = 0;
  std::vector<WorkerId> attempt_workers;  // worker of each attempt, in order
};

struct MemWorker {
  WorkerId id = 0;
  std::string name;
  int node = 0;
  int pid_ns = 0;
  int process = 0;  // the simulated process (incarnation) that registered it
  WorkerState state = WorkerState::kActive;
  TimeMs last_heartbeat = 0;
  bool presumed_dead = false;  // marked dead for a stale heartbeat, not proven
  bool session_lost = false;   // PostgreSQL: its session lock is gone
  int64_t session_epoch = 0;
};

// What the invariant checks hear from the store.
class StoreObserver {
 public:
  virtual ~StoreObserver() = default;
  // An accepted write a worker made about a job, with the token it named
  // and the job's token when it was applied ("complete", "fail", "start",
  // "checkpoint").
  virtual void OnAcceptedWrite(const char* what, const MemJob& job, int64_t named_token,
                               int64_t current_token) = 0;
  // The job was taken from the holder of `token` (rescued, its worker
  // declared dead or stopped) without that holder's word.
  virtual void OnTakenAway(const MemJob& job, int64_t token, const char* why) = 0;
  virtual void OnClaimed(const MemJob& job) = 0;
  // A heartbeat renewed the job's lease (a claim is OnClaimed).
  virtual void OnLeaseRenewed(const MemJob& job) = 0;
  // The job's run_at was set (enqueued, retried with a backoff, retried by
  // an operator), `delay` after the store's now.
  virtual void OnRunAtSet(const MemJob& job, Millis delay) = 0;
  virtual void OnWorkerGone(const MemWorker& w) = 0;  // dead or stopped
};

class MemStore {
 public:
  MemStore(Mutation mutation, uint64_t seed, StoreObserver* observer);

  // Jobs.
  JobId JobInsert(const JobSpec& spec, TimeMs now);
  Result<std::vector<JobInfo>> JobClaim(const ClaimParams& p, TimeMs now);
  bool JobMarkStarted(JobRef ref, TimeMs now);
  std::vector<bool> JobFinishMany(WorkerId worker, std::span<const JobOutcome> outcomes,
                                  TimeMs now);
  bool JobCheckpoint(JobRef ref, int64_t value);
  Status JobRetry(JobId id, TimeMs now);
  Result<JobState> JobCancel(JobId id, TimeMs now);
  std::optional<Millis> JobNextDueIn(TimeMs now) const;

  // Workers.
  Result<WorkerId> WorkerRegister(const MemWorker& row, TimeMs now);
  HeartbeatReply WorkerHeartbeat(WorkerId id, TimeMs now);
  void WorkerSetDraining(WorkerId id);
  void WorkerStop(WorkerId id, TimeMs now);
  std::vector<WorkerLiveness> WorkerListLive(const std::string& name) const;
  RescueReport WorkerDeclareDead(WorkerId id, const std::string& reason, TimeMs now);
  // Presumed dead: each worker of `silent` still live with the heartbeat
  // as seen.
  int WorkerMarkSilent(std::span<const WorkerLiveness> silent, TimeMs now);
  // PostgreSQL sessions: the server saw the connection go / the worker
  // locked again (a new epoch).
  void SessionLost(WorkerId id);
  void SessionRelocked(WorkerId id);

  // Maintenance. The one role, `sweeper`: taken or renewed for `ttl` when
  // free, already `holder`'s, held by a worker no longer live, or held
  // exactly as `silent` says.
  std::optional<LeaderRow> LeaderRead() const;
  bool LeaderTryAcquire(WorkerId holder, Millis ttl, const std::optional<LeaderRow>& silent,
                        TimeMs now);
  // Every running job's lease, with its worker row's heartbeat (LEFT JOIN:
  // whatever the worker's state).
  std::vector<LeaseRow> JobLeases() const;
  // Each job of `silent` still running under the lease as seen.
  RescueReport JobRescueSilent(std::span<const LeaseRow> silent, TimeMs now);
  int JobExpire(TimeMs now);
  int JobPromote(TimeMs now);

  const std::vector<MemJob>& jobs() const { return jobs_; }
  const MemJob& job(JobId id) const { return jobs_[id - 1]; }
  const MemWorker* worker(WorkerId id) const;
  const std::vector<MemWorker>& workers() const { return workers_; }
  std::optional<WorkerId> leader() const { return leader_holder_; }

 private:
  bool Live(WorkerId id) const;
  int PromoteDue(TimeMs now);
  bool Succeed(const JobOutcome& o, TimeMs now);
  // `rescue`: the store itself ends the attempt (its holder said nothing).
  bool Fail(const JobOutcome& o, TimeMs now, const char* rescue);
  RescueReport RescueWhere(bool (*match)(const MemJob&, int64_t), int64_t arg, TimeMs now,
                           const char* why);
  MemJob* Find(JobId id);
  MemWorker* FindWorker(WorkerId id);

  Mutation mutation_;
  Rng jitter_;
  StoreObserver* observer_;
  std::vector<MemJob> jobs_;        // id = index + 1
  std::vector<MemWorker> workers_;  // id = index + 1
  std::optional<WorkerId> leader_holder_;
  TimeMs leader_expires_at_ = 0;
  Millis leader_ttl_{0};
};

}  // namespace warden::sim
