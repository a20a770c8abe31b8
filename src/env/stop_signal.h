// StopSignal: how a worker asks one running job to stop (a cancel, a
// self-fence, a shutdown), and why. The subprocess supervisor waits on it
// in poll() beside the job's pipes (env/subprocess.h); in-process
// handlers read it through their JobContext.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <mutex>

namespace warden {

// kNodeDrain: its node takes no more work and the drain's time ran out.
enum class StopReason { kNone, kCancel, kFence, kShutdown, kNodeDrain };

// Wakes a running subprocess supervision to stop it (cancel, self-fence,
// shutdown). A latch: once requested it stays requested, and the first
// reason wins. Backed by an eventfd so poll() can wait on it, made on first
// use: most jobs are in-process handlers that never wait on it, and two
// syscalls per job showed in the throughput profile. Thread-safe.
class StopSignal {
 public:
  StopSignal() = default;
  ~StopSignal();
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  void Request(StopReason why);
  bool requested() const { return reason() != StopReason::kNone; }
  StopReason reason() const { return reason_.load(); }
  // Readable once requested (never drained). -1 if the eventfd could not be
  // created; waiters then fall back to polling requested().
  int fd() const;

 private:
  std::atomic<StopReason> reason_{StopReason::kNone};
  mutable std::once_flag made_;
  mutable std::atomic<int> fd_{-1};
};

}  // namespace warden
