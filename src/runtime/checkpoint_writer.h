// Saves a command job's checkpoints (`checkpoint JSON` lines on fd 3) on a
// thread of its own. The supervisor that reads those lines is also the one
// that kills the job on a stop; were it to make the store call itself, a
// call that hangs (the SQLite file locked, a PostgreSQL partition) would
// leave a fenced job running past its lease while its next attempt runs
// elsewhere. Here the supervisor only hands the line over and goes on.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "warden/job.h"
#include "warden/status.h"

namespace warden {

class CheckpointWriter {
 public:
  // Returns false when the store refused the write: the attempt was fenced.
  using SaveFn = std::function<Result<bool>(const Json&)>;
  CheckpointWriter(SaveFn save, std::function<void()> on_fenced);
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Queues a checkpoint; one still waiting is replaced (only the latest
  // matters to the next attempt).
  void Submit(Json checkpoint);
  // Waits for the last queued checkpoint to be written or refused, so the
  // job's outcome is recorded after it; returns what went wrong, if anything.
  std::string Finish();

 private:
  void Loop();

  SaveFn save_;
  std::function<void()> on_fenced_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Json> pending_;  // guarded by mu_
  bool done_ = false;            // guarded by mu_
  std::string errors_;           // guarded by mu_
  std::thread thread_;           // started by the first Submit
};

}  // namespace warden
