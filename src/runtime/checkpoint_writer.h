// Saves a job's checkpoints on a thread of its own: a command's (`checkpoint
// JSON` lines on fd 3) and an in-process handler's (SaveCheckpoint). The
// supervisor that reads a command's lines is also the one that kills the job
// on a stop, and a handler learns of a stop only between its own calls;
// were either to make the store call itself, a call that hangs (the SQLite
// file locked, a PostgreSQL partition) would keep a fenced job running past
// its lease while its next attempt runs elsewhere. Here the caller hands the
// checkpoint over and waits for it only as long as the job may go on.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/mutex.h"
#include "env/env.h"
#include "warden/job.h"
#include "warden/status.h"

namespace warden {

class CheckpointWriter {
 public:
  // Returns false when the store refused the write: the attempt was fenced.
  using SaveFn = std::function<Result<bool>(const Json&)>;
  CheckpointWriter(Env& env, SaveFn save, std::function<void()> on_fenced);
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Queues a checkpoint; one still waiting is replaced (only the latest
  // matters to the next attempt).
  void Submit(Json checkpoint) EXCLUDES(mu_);
  // Queues a checkpoint and waits until it is written (Ok), refused
  // (kFailedPrecondition: the attempt was fenced) or failed (the store's
  // error); or until `give_up()`, polled every 10 ms, says the job must
  // stop (kFailedPrecondition too; the write goes on, and lands or is
  // refused later).
  Status SaveAndWait(Json checkpoint, const std::function<bool()>& give_up) EXCLUDES(mu_);
  // Waits for the last queued checkpoint to be written or refused, so the
  // job's outcome is recorded after it; returns what went wrong, if anything.
  std::string Finish() EXCLUDES(mu_);

 private:
  void Loop();

  Env& env_;
  SaveFn save_;
  std::function<void()> on_fenced_;
  Mutex mu_;
  CondVar cv_{env_.clock()};
  std::optional<Json> pending_ GUARDED_BY(mu_);
  int64_t submitted_ GUARDED_BY(mu_) = 0;  // checkpoints queued so far
  int64_t settled_ GUARDED_BY(mu_) = 0;    // the last one written or failed
  Status last_ GUARDED_BY(mu_);            // how that one went
  bool done_ GUARDED_BY(mu_) = false;
  std::string errors_ GUARDED_BY(mu_);
  // Started by the first Submit, with mu_ held and before done_; Finish reads
  // it unlocked, but only after setting done_, when no Submit starts it.
  std::unique_ptr<Thread> thread_;
};

}  // namespace warden
