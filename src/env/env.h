// Env: everything the worker runtime and maintenance ask of the operating
// system, in one place (after leveldb's Env): the clock they read and wait
// on, their threads, wake-up fds and polls, facts about this host and its
// processes, pidfds, and the job processes they run. The real one is
// DefaultEnv(); a simulation stands in for the OS with one of its own, and
// FaultEnv (env/fault_env.h) makes chosen calls fail.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <poll.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "core/clock.h"
#include "env/subprocess.h"

namespace warden {

// This host and process, as a worker row records them (what proofs of
// death compare: env/process.h).
struct HostFacts {
  std::string node;     // host name
  std::string boot_id;  // distinguishes reboots of the host
  std::string pid_ns;   // pids are only comparable within one namespace
  int pid = 0;
  int64_t pid_start = -1;  // this process's start time (pid reuse)
};

class Thread {
 public:
  virtual ~Thread() = default;
  virtual void Join() = 0;
};

class Env {
 public:
  virtual ~Env() = default;

  virtual const Clock& clock() = 0;
  virtual std::unique_ptr<Thread> StartThread(std::function<void()> body) = 0;

  // Wake-ups: an fd that Poll sees readable once signalled, until drained
  // (an eventfd). -1 when none could be made.
  virtual int NewWakeFd() = 0;
  virtual void SignalWakeFd(int fd) = 0;
  virtual void DrainWakeFd(int fd) = 0;
  virtual void CloseFd(int fd) = 0;
  // poll(2) until the clock's monotonic `deadline_mono` (kNoDeadline:
  // none): the number of ready fds, 0 at the deadline, -1 on error.
  virtual int Poll(std::span<pollfd> fds, int64_t deadline_mono) = 0;

  // This host and process; facts about other processes of this host.
  virtual const HostFacts& Host() = 0;
  virtual bool ProcessAlive(int pid, int64_t start_time) = 0;
  virtual bool ProcessProvablyGone(int pid, int64_t start_time) = 0;
  // A pidfd for `pid` (readable once it exits); -1 if none.
  virtual int PidfdOpen(int pid) = 0;

  // Runs a job's command to its end (env/subprocess.h).
  virtual SubprocessResult RunSubprocess(
      const SubprocessSpec& spec, StopSignal& stop,
      const std::function<void(const std::string&)>& on_control_line) = 0;
};

// The operating system itself, on SystemClock.
Env& DefaultEnv();

// Passes every call to another Env; a base for Envs that change a few
// (another clock, injected faults).
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env& target) : target_(target) {}
  Env& target() { return target_; }

  const Clock& clock() override { return target_.clock(); }
  std::unique_ptr<Thread> StartThread(std::function<void()> body) override {
    return target_.StartThread(std::move(body));
  }
  int NewWakeFd() override { return target_.NewWakeFd(); }
  void SignalWakeFd(int fd) override { target_.SignalWakeFd(fd); }
  void DrainWakeFd(int fd) override { target_.DrainWakeFd(fd); }
  void CloseFd(int fd) override { target_.CloseFd(fd); }
  int Poll(std::span<pollfd> fds, int64_t deadline_mono) override {
    return target_.Poll(fds, deadline_mono);
  }
  const HostFacts& Host() override { return target_.Host(); }
  bool ProcessAlive(int pid, int64_t start_time) override {
    return target_.ProcessAlive(pid, start_time);
  }
  bool ProcessProvablyGone(int pid, int64_t start_time) override {
    return target_.ProcessProvablyGone(pid, start_time);
  }
  int PidfdOpen(int pid) override { return target_.PidfdOpen(pid); }
  SubprocessResult RunSubprocess(
      const SubprocessSpec& spec, StopSignal& stop,
      const std::function<void(const std::string&)>& on_control_line) override {
    return target_.RunSubprocess(spec, stop, on_control_line);
  }

 private:
  Env& target_;
};

// Another Env on a clock of its own (a FakeClock, in tests): waits and
// polls end by that clock's deadlines.
class ClockEnv : public EnvWrapper {
 public:
  ClockEnv(Env& target, const Clock& clock) : EnvWrapper(target), clock_(clock) {}
  const Clock& clock() override { return clock_; }
  // The target polls in slices of a real ms until this clock's deadline.
  int Poll(std::span<pollfd> fds, int64_t deadline_mono) override;

 private:
  const Clock& clock_;
};

}  // namespace warden
