// FaultEnv: another Env (usually DefaultEnv()) with chosen calls made to
// fail, as the operating system can make them fail: no wake-up fds (out of
// fds), no pidfds (an old kernel, out of fds), processes that cannot be
// seen (/proc mounted with hidepid), job processes that cannot be spawned
// (fork: EAGAIN). Each fault can be switched on and off while a worker runs;
// counters say how often each call was made.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "env/env.h"

namespace warden {

class FaultEnv : public EnvWrapper {
 public:
  explicit FaultEnv(Env& target) : EnvWrapper(target) {}

  std::atomic<bool> fail_wake_fds{false};
  std::atomic<bool> fail_pidfds{false};
  // ProcessAlive and ProcessProvablyGone both say no: nothing is known.
  std::atomic<bool> hide_processes{false};
  std::atomic<bool> fail_spawns{false};

  std::atomic<int64_t> pidfd_opens{0};
  std::atomic<int64_t> spawns{0};

  int NewWakeFd() override;
  bool ProcessAlive(int pid, int64_t start_time) override;
  bool ProcessProvablyGone(int pid, int64_t start_time) override;
  int PidfdOpen(int pid) override;
  SubprocessResult RunSubprocess(
      const SubprocessSpec& spec, StopSignal& stop,
      const std::function<void(const std::string&)>& on_control_line) override;
};

}  // namespace warden
