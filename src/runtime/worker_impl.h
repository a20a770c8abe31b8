// Worker::Impl: the threads of one worker process and what they share.
//
//   claim loop (Run's thread)  claims for the free slots (and, for short jobs,
//                              ahead of them: core/claim_ahead.h), queues the jobs
//   slot threads (concurrency) run one job each: a command under the
//                              subprocess supervisor, or an in-process handler
//   completer                  writes outcomes in batches
//   heartbeat                  refreshes the worker row and its leases; learns
//                              of cancellations and of jobs taken from it
//   watchdog                   self-fencing and in-process timeouts, on the
//                              monotonic clock, never blocked by the store
//   sweeper                    leader lease; proven deaths on this host (pidfd)
//                              or by a lost database session, and the
//                              maintenance pass
//   session                    the worker's WorkerSession: wake-ups (LISTEN or
//                              a socket) and, on PostgreSQL, the session lock
//                              that proves it alive; reconnects it when lost
//
// Each thread that talks to the store has its own connection, so a slow
// claim never delays a heartbeat.
#pragma once

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/lost_claims.h"
#include "core/metrics.h"
#include "core/mutex.h"
#include "runtime/completer.h"
#include "runtime/lease_guard.h"
#include "runtime/log.h"
#include "runtime/running_job.h"
#include "warden/client.h"
#include "store/store.h"
#include "warden/worker.h"

namespace warden {

class Worker::Impl {
 public:
  using OpenStoreFn = std::function<Result<std::unique_ptr<Store>>()>;
  // `stores`: those Create could open (up to four); Run opens the rest.
  Impl(std::string url, WorkerOptions options, Env& env, OpenStoreFn open_store,
       std::vector<std::unique_ptr<Store>> stores);
  ~Impl();

  Status Run();
  void Stop(bool release_now);

  std::string url_;
  WorkerOptions opt_;
  std::map<std::string, Handler> handlers_;
  std::atomic<WorkerId> id_{0};
  WorkerCounters counters_;

  // The metrics (runtime/worker_metrics.cc).
  std::string ExportMetrics() EXCLUDES(mu_);
  Status Ready() const;
  Status Live() const;

 private:
  // Opens the stores Create could not, recovers the previous incarnation
  // and registers, retrying errors that go away by themselves (a database
  // server restarting) for up to opt_.start_timeout. Ok with id_ == 0:
  // stopped before it could start.
  Status Start();
  Status StartOnce();
  Status RecoverPreviousIncarnation();
  Status Register();

  // The claim loop and its steps (runtime/claim_loop.cc).
  void ClaimLoop();
  // What the claim loop may claim now, read together.
  struct ClaimRoomNow {
    int ahead = 0;           // beyond the free slots (core/claim_ahead.h)
    int held = 0;            // jobs in running_
    int64_t unsettled = 0;   // outcomes run but not yet committed
    int slots_free = 0;
    int free = 0;            // what to claim now (core/held_bound.h's ClaimRoom)
    bool by_unsettled = false;  // fewer than the slots allow: held back by `unsettled`
  };
  ClaimRoomNow MeasureClaimRoom() EXCLUDES(mu_);
  // A failed claim is retried after `backoff`, said once until one works.
  struct ClaimRetry {
    Millis backoff{50};
    bool reported = false;
  };
  enum class ClaimStep { kClaimed, kFailed, kFatal };
  // Claims up to room.free jobs (`*got` of them) and queues them for the
  // slots. kFailed: slept the backoff; kFatal: the worker is stopping.
  ClaimStep ClaimAndQueue(ClaimParams& params, const ClaimRoomNow& room, ClaimRetry& retry,
                          size_t* got) EXCLUDES(mu_);
  void QueueClaimed(std::vector<JobInfo>& claimed, WorkerId worker, int64_t claim_start_mono,
                    double claim_us) EXCLUDES(mu_);
  // Until a slot frees, a batch commits, the worker stops, the session
  // hears of new jobs, or the poll interval (shorter when a job falls due).
  void WaitForClaimRoom(const ClaimRoomNow& room, bool claimed_none) EXCLUDES(mu_);

  void SlotLoop();
  void HeartbeatLoop();
  void WatchdogLoop();
  void SweeperLoop();
  void SessionLoop();
  // While this worker leads maintenance, runs opt_.inventory_command when
  // core/inventory_trigger.h says (only started when there is one).
  void InventoryLoop();
  void Shutdown();
  // Until `start` + the heartbeat interval, which shrinks when a job with a
  // shorter lease is claimed meanwhile.
  void SleepUntilNextHeartbeat(int64_t start) EXCLUDES(mu_);
  // Until when (clock_.MonotonicMs) this worker can prove that `r`'s lease
  // is still its own (runtime/lease_guard.h); 0: not at all. No job's code
  // starts at or after it, whatever queue it waited in (Execute; a
  // command's own process checks it last, just before exec).
  int64_t LeaseProvenUntil(const RunningJob& r) { return lease_guard_.ProvenUntil(r, id_); }
  bool LeaseProven(const RunningJob& r) { return clock_.MonotonicMs() < LeaseProvenUntil(r); }
  // Hands back, unrun, jobs the store says this worker holds but whose
  // claim's reply was lost (see core/lost_claims.h). `reply_mono`: when the
  // heartbeat's reply came.
  void ReleaseLostClaims(const HeartbeatStart& at_start,
                         const std::unordered_map<JobId, int64_t>& held, int64_t reply_mono);
  LostClaimDetector lost_claims_;  // heartbeat thread only
  // The heartbeat's word on this worker's node (warden/nodes.h): when it
  // takes no work, the running jobs get --shutdown-timeout, then are
  // released; the store gives the worker nothing more meanwhile.
  void DrainIfNodeClosed(bool node_takes_work);
  bool node_closed_ = false;  // heartbeat thread only, as the two below
  int64_t node_closed_mono_ = 0;
  bool node_released_ = false;

  // Metrics (runtime/worker_metrics.cc).
  Completer::Tally TallyFor(const std::shared_ptr<RunningJob>& r, const JobOutcome& o) const;
  void CountWritten(std::span<const Completer::Tally> tallies, const std::vector<bool>& accepted);
  void CountClaimed(const std::vector<JobInfo>& jobs);
  void CountRecoveries(const std::vector<Recovery>& recoveries);
  // Writes the snapshot into the worker row when it changed (heartbeat
  // thread, or Shutdown once the threads are done).
  void FlushMetrics();
  // Registered again: what came before stays with the old row.
  void RebaseMetrics();
  Metrics metrics_;
  uint64_t flushed_version_ = 0;  // heartbeat thread
  MetricSnapshot flush_base_;     // heartbeat thread
  std::atomic<bool> leader_{false};
  // Workers the maintenance passes declared dead, for InventoryLoop (which
  // takes them); and the stop of the inventory command it runs.
  std::atomic<int> deaths_unseen_by_inventory_{0};
  StopSignal inventory_stop_;
  // When the watchdog loop last turned (0: not running): what Live() judges.
  std::atomic<int64_t> watchdog_turned_mono_{0};
  std::atomic<int64_t> last_heartbeat_ok_mono_{0};

  // Runs one job and says how its attempt ended. There is always an outcome:
  // the heartbeats keep a held job's lease alive, so a job left without one
  // would stay `running`.
  JobOutcome Execute(RunningJob& r);
  // The outcome of a job that must not start (stopped, or its lease not
  // proven); nullopt if it may. Logs the refusals it decides itself.
  std::optional<JobOutcome> RefuseUnproven(RunningJob& r);
  // The outcome, logged, of a job refused for want of a proven lease.
  JobOutcome NotStarted(RunningJob& r);
  JobOutcome ExecuteCommand(RunningJob& r, const std::string& command);
  JobOutcome ExecuteHandler(RunningJob& r, const Handler& handler);
  // At-most-once: the durable `started` mark, retried on transient errors.
  Result<bool> MarkStarted(RunningJob& r);
  bool Retrying(const Status& s, int64_t deadline_mono, Millis* backoff);

  void WakeClaimLoop();
  // Wakes idle slots for queued jobs that no slot already awake is on its
  // way to: a few at a time, each woken slot passing the word on.
  void WakeSlotsLocked() REQUIRES(mu_);
  void StopAll(StopReason why, const std::string& log_line) EXCLUDES(mu_);
  size_t Inflight() EXCLUDES(mu_);
  // A sleep that ends early when the worker stops.
  void SleepFor(Millis d) EXCLUDES(mu_);

  bool Logs(LogLevel level) const { return level <= opt_.log_level; }
  // `job`: the job the line is about (0: none); `fields`: more facts for
  // the JSON format (warden/log.h).
  void Log(LogLevel level, const std::string& line, JobId job = 0, Json fields = Json()) {
    if (Logs(level)) log_(LogRecord{level, line, job, std::move(fields)});
  }
  // Calls opt_.on_phase (kStopping at most once, from whichever thread
  // gets there first).
  void Tell(WorkerPhase phase, const std::string& detail);
  std::atomic<bool> told_stopping_{false};
  // The line for a finished attempt (at kInfo, or kWarn when it failed):
  // LogOutcome keeps in `tally` what LogWritten says once the outcome is
  // written, and says instead that the store refused it, if it did.
  void LogOutcome(const RunningJob& r, const JobOutcome& o, Completer::Tally& tally);
  void LogWritten(std::span<const Completer::Tally> tallies, const std::vector<bool>& accepted);
  // The tasks it has a handler or a --task for: what it registers, claims
  // and says it runs.
  std::vector<std::string> Tasks() const;
  // "queues a, b; tasks resize, thumbnail and command jobs": what it runs.
  std::string Serves() const;
  // Asked by the claim loop when a claim found nothing (`may_exit`: nothing
  // held either). Says once that command jobs wait on its queues which it
  // does not run (no --allow-cmd; looked for at most once a minute). With
  // --exit-when-idle, whether nothing it could run is left: none
  // available, retryable, due, or running anywhere
  // (a running job it could run comes back if its worker dies). Jobs it can
  // never run, and jobs scheduled for later, do not keep it; it names them.
  bool NothingLeftToRun(bool may_exit);
  bool said_commands_skipped_ = false;   // claim loop only
  int64_t next_commands_check_mono_ = 0;  // claim loop only

  Env& env_;
  const Clock& clock_;  // env_'s
  LogFn log_;
  OpenStoreFn open_store_;
  std::unique_ptr<Store> claim_store_;      // claims, marks, checkpoints
  std::unique_ptr<Store> heartbeat_store_;
  std::unique_ptr<Store> sweep_store_;
  std::unique_ptr<Store> finish_store_;
  std::unique_ptr<Completer> completer_;
  // The session loop's; closed after WorkerStop (see Shutdown).
  std::unique_ptr<WorkerSession> session_;
  // What the session's lock and the heartbeats prove about the leases.
  LeaseGuard lease_guard_{clock_, opt_.heartbeat};
  int wake_fd_ = -1;  // env_'s wake-up: a slot freed, or stop
  int stop_fd_ = -1;  // wake-up: the background loops must end
  int longer_lease_fd_ = -1;  // wake-up: a job with a longer lease was claimed

  Mutex mu_;
  CondVar slot_cv_{clock_};
  CondVar sleep_cv_{clock_};
  CondVar heartbeat_cv_{clock_};  // a job with a shorter lease came in
  std::map<JobId, std::shared_ptr<RunningJob>> running_ GUARDED_BY(mu_);
  std::deque<std::shared_ptr<RunningJob>> queue_ GUARDED_BY(mu_);
  // Slots waiting for a job, and those of them woken to take one and not
  // yet awake (see WakeSlotsLocked).
  int idle_slots_ GUARDED_BY(mu_) = 0;
  int slot_wakes_ GUARDED_BY(mu_) = 0;
  // The claim loop is (about to be) asleep until a slot frees or new jobs
  // come: only then does a freed slot need to wake it.
  std::atomic<bool> claim_loop_asleep_{false};
  bool slots_exit_ GUARDED_BY(mu_) = false;
  // When the claim in flight was sent; none between claims (one claim
  // loop: at most one at a time).
  std::optional<int64_t> claim_sent_mono_ GUARDED_BY(mu_);
  // Recent averages, in µs, of a claim's round trip and of a started job's
  // time in its slot: how many jobs to claim ahead (core/claim_ahead.h).
  double claim_us_avg_ GUARDED_BY(mu_) = 0;
  double job_us_avg_ GUARDED_BY(mu_) = 0;

  std::atomic<bool> stopping_{false};
  Status fatal_;  // why the claim loop stopped the worker (ClaimLoop's thread only)
  std::atomic<bool> release_now_{false};
  std::atomic<bool> threads_done_{false};
  std::vector<std::unique_ptr<Thread>> threads_;
};

}  // namespace warden
