// DefaultEnv: the operating system, on SystemClock.
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <thread>

#include "core/mutex.h"
#include "env/env.h"
#include "env/process.h"
#include "env/system_clock.h"

namespace warden {
namespace {

class StdThread : public Thread {
 public:
  explicit StdThread(std::function<void()> body) : thread_(std::move(body)) {}
  ~StdThread() override {
    if (thread_.joinable()) thread_.join();
  }
  void Join() override {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

class PosixEnv : public Env {
 public:
  const Clock& clock() override { return SystemClock::Get(); }

  std::unique_ptr<Thread> StartThread(std::function<void()> body) override {
    return std::make_unique<StdThread>(std::move(body));
  }

  int NewWakeFd() override { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
  void SignalWakeFd(int fd) override {
    const uint64_t one = 1;
    (void)!write(fd, &one, sizeof one);
  }
  void DrainWakeFd(int fd) override {
    uint64_t drained;
    (void)!read(fd, &drained, sizeof drained);
  }
  void CloseFd(int fd) override {
    if (fd >= 0) close(fd);
  }

  int Poll(std::span<pollfd> fds, int64_t deadline_mono) override {
    int timeout = -1;
    if (deadline_mono != kNoDeadline) {
      const int64_t left = deadline_mono - SystemClock::Get().MonotonicMs();
      timeout = static_cast<int>(std::clamp<int64_t>(left, 0, INT_MAX));
    }
    return poll(fds.data(), fds.size(), timeout);
  }

  // Read once, and again in a forked child (a program that starts its
  // worker after daemonizing): its pid is another.
  const HostFacts& Host() override {
    MutexLock lock(host_mu_);
    if (host_.pid != getpid()) {
      host_.node = HostName();
      host_.boot_id = BootId();
      host_.pid_ns = PidNamespace();
      host_.pid = getpid();
      host_.pid_start = ProcessStartTime(host_.pid);
    }
    return host_;
  }
  bool ProcessAlive(int pid, int64_t start_time) override {
    return warden::ProcessAlive(pid, start_time);
  }
  bool ProcessProvablyGone(int pid, int64_t start_time) override {
    return warden::ProcessProvablyGone(pid, start_time);
  }
  int PidfdOpen(int pid) override { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

  SubprocessResult RunSubprocess(
      const SubprocessSpec& spec, StopSignal& stop,
      const std::function<void(const std::string&)>& on_control_line) override {
    return warden::RunSubprocess(spec, stop, on_control_line);
  }

 private:
  // Written under host_mu_, only before it is first returned (or in a
  // forked child, before its threads read it): then read without it.
  Mutex host_mu_;
  HostFacts host_;
};

}  // namespace

Env& DefaultEnv() {
  static PosixEnv env;
  return env;
}

}  // namespace warden
