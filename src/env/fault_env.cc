#include "env/fault_env.h"

#include <cerrno>

namespace warden {

int FaultEnv::NewWakeFd() {
  if (fail_wake_fds) {
    errno = EMFILE;
    return -1;
  }
  return EnvWrapper::NewWakeFd();
}

bool FaultEnv::ProcessAlive(int pid, int64_t start_time) {
  return !hide_processes && EnvWrapper::ProcessAlive(pid, start_time);
}

bool FaultEnv::ProcessProvablyGone(int pid, int64_t start_time) {
  return !hide_processes && EnvWrapper::ProcessProvablyGone(pid, start_time);
}

int FaultEnv::PidfdOpen(int pid) {
  ++pidfd_opens;
  if (fail_pidfds) {
    errno = ENOSYS;
    return -1;
  }
  return EnvWrapper::PidfdOpen(pid);
}

SubprocessResult FaultEnv::RunSubprocess(
    const SubprocessSpec& spec, StopSignal& stop,
    const std::function<void(const std::string&)>& on_control_line) {
  ++spawns;
  if (fail_spawns) {
    SubprocessResult r;
    r.spawn_error = "fork: Resource temporarily unavailable (injected by FaultEnv)";
    return r;
  }
  return EnvWrapper::RunSubprocess(spec, stop, on_control_line);
}

}  // namespace warden
