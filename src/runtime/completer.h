// Completer: writes job outcomes in batches (group commit).
//
// Outcomes wait up to `window` so that many share one transaction (one
// fsync). Store errors that go away (busy, locked, disconnected) are retried
// with backoff for as long as the worker runs: its heartbeats keep the job's
// lease alive, so nothing else would recover a dropped outcome's job. Once
// stopping, an outcome is retried until `give_up_after` from its Add, then
// dropped with a log line (the worker's goodbye, or its lease expiry,
// recovers the job). Writes are fenced, so no outcome is ever recorded twice,
// and none is invented.
//
// Thread safety: Add/Flush/Stop from any thread; one writer thread inside.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/mutex.h"
#include "env/env.h"
#include "store/store.h"

namespace warden {

struct RunningJob;  // runtime/worker_impl.h

// What an outcome counts for once written (the worker's metrics).
struct OutcomeTally {
  std::shared_ptr<const RunningJob> run;  // its job's queue, and the log line's facts
  const char* outcome = nullptr;  // core/metrics.h kOutcomes; null: not an ended attempt
  bool released = false;          // handed back unfinished (cause `release`)
  bool quarantined = false;       // it leaves the job dead as crash_loop
  int64_t run_ms = -1;            // < 0: it did not run
  // A failure's log line, built when the attempt ended (it needs the error,
  // which goes to the store); a success's is built only when said. Both
  // are said once the outcome is written, so that the line can say whether
  // it counted (Worker::Impl::LogWritten).
  std::string failure_line;
  Json failure_fields;
};

class Completer {
 public:
  using Tally = OutcomeTally;
  struct Callbacks {
    std::function<WorkerId()> worker_id;
    // A line to log; `job`: the job it is about (0: none).
    std::function<void(JobId job, const std::string&)> log;
    // After each committed batch (its outcomes no longer unsettled): how
    // many were accepted / fenced off, and whether any freed a concurrency
    // key (other workers may now claim).
    std::function<void(int accepted, int fenced, bool freed_keys)> on_batch;
    // After each committed write, once for its outcomes: their tallies,
    // and whether each was accepted (false: fenced off). Not for dropped
    // ones. One call per batch, not per job: the metrics it feeds are
    // counted per series (Worker::Impl::CountWritten).
    std::function<void(std::span<const Tally> tallies, const std::vector<bool>& accepted)>
        on_written;
  };

  Completer(Store& store, Env& env, Millis window, Callbacks callbacks);
  ~Completer();

  // `give_up_after`: once stopping, how long (from now) to keep retrying a
  // failing write.
  void Add(JobOutcome outcome, Millis give_up_after, bool has_concurrency_key,
           Tally tally = {}) EXCLUDES(mu_);
  // Blocks until every outcome added before the call is written or dropped.
  void Flush() EXCLUDES(mu_);
  void Stop() EXCLUDES(mu_);  // flushes, then ends the writer thread
  bool idle() EXCLUDES(mu_);
  // Outcomes added and not yet written (or dropped). Each is a job still
  // `running` in the store; the claim loop counts them (core/held_bound.h).
  int64_t Unsettled() EXCLUDES(mu_);
  // Adds to `ids` every job whose outcome was added and is not yet written
  // (or dropped).
  void CollectUnsettled(std::unordered_set<JobId>& ids) EXCLUDES(mu_);

 private:
  struct Item {
    JobOutcome outcome;
    int64_t give_up_at_mono;
    bool keyed;
    Tally tally;
  };
  void Loop();
  void WriteOneByOne(std::vector<Item> batch, const Status& why);
  void SettleLocked(const Item& item) REQUIRES(mu_);

  Store& store_;
  Env& env_;
  const Clock& clock_;  // env_'s
  Millis window_;
  Callbacks cb_;
  Mutex mu_;
  CondVar cv_{clock_};
  std::deque<Item> pending_ GUARDED_BY(mu_);
  int64_t added_ GUARDED_BY(mu_) = 0;
  int64_t settled_ GUARDED_BY(mu_) = 0;
  std::unordered_map<JobId, int> unsettled_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::unique_ptr<Thread> thread_;  // null once Stop has joined it
};

}  // namespace warden
