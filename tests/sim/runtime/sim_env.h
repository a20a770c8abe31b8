// SimEnv: one simulated process's operating system (env/env.h), for running
// warden's real worker runtime under the Scheduler. Its threads are
// Scheduler threads of one group (frozen and thawed together); its clock
// runs at its own rate from virtual time, and every wait on it (a CondVar,
// a sleep, a poll, a join) parks the thread until virtual time reaches the
// deadline or another thread notifies it. Wake-up fds are virtual. The host
// and its processes are a SimHost (below), shared by its processes. A
// killed process's threads race to their end in no virtual time (Kill).
//
// Thread safety: called by the thread holding the Scheduler's baton.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "env/env.h"
#include "env/subprocess.h"
#include "scheduler.h"

namespace warden::sim {

// A simulated host: its name, boot, which of its processes are alive, and
// how far its wall clock has been stepped (a process started later reads
// it so; the caller steps those already running).
struct SimHost {
  std::string name = "sim-host";
  std::string boot_id = "sim-boot-1";
  std::set<std::pair<int, int64_t>> live;  // (pid, start time)
  int64_t wall_step_ms = 0;
};

// A clock that reads virtual time: wall time from `wall_origin_ms` (plus
// any steps), monotonic time at `rate` times virtual time. Waits park.
class SimClock : public Clock {
 public:
  SimClock(Scheduler& sched, TimeMs wall_origin_ms, double rate = 1.0)
      : sched_(sched), wall_origin_ms_(wall_origin_ms), rate_(rate) {}

  TimeMs NowMs() const override {
    return wall_origin_ms_ + step_ms_ + (sched_.now() + warp_us_) / 1000;
  }
  int64_t MonotonicMs() const override { return MonotonicUs() / 1000; }
  int64_t MonotonicUs() const override {
    return static_cast<int64_t>(static_cast<double>(sched_.now()) * rate_) + warp_us_;
  }
  void Wait(CondVar& cv, UniqueMutexLock& lock, int64_t deadline_mono) const override;
  void Notify(CondVar& cv, bool all) const override;

  // The wall clock steps (NTP, a VM resumed); monotonic time does not.
  void StepWall(int64_t ms) { step_ms_ += ms; }
  // Its process was killed: what is left of it winds down in no virtual
  // time, each wait with a deadline jumping this clock to it.
  void Race() { racing_ = true; }
  bool racing() const { return racing_; }
  // Jumps monotonic (and wall) time forward to `mono_ms`.
  void WarpTo(int64_t mono_ms) const {
    if (mono_ms > MonotonicMs()) warp_us_ += mono_ms * 1000 - MonotonicUs();
  }
  // The virtual time at which MonotonicMs() reaches `mono_ms`.
  VirtUs WhenMonotonic(int64_t mono_ms) const;
  Scheduler& scheduler() const { return sched_; }

 private:
  Scheduler& sched_;
  TimeMs wall_origin_ms_;
  int64_t step_ms_ = 0;
  double rate_;
  mutable int64_t warp_us_ = 0;
  bool racing_ = false;
  mutable std::map<const CondVar*, std::deque<SimThread*>> waiters_;
};

// A job's process, forked by SimEnv::RunSubprocess: a thread of a group of
// its own (a worker frozen alone leaves it running), signalled by its
// supervisor. Its code (SimEnv::JobCode) sleeps in steps and ends when
// `term` or `killed` is set.
struct SimJobProcess {
  int group = 0;
  bool term = false;    // SIGTERM: its code stops at its next step
  bool killed = false;  // SIGKILL: gone at once, whatever it was doing
  bool exited = false;
  bool missed_start = false;  // the start gate's check before exec failed
  int exit_code = 0;
  SimThread* thread = nullptr;
  SimThread* supervisor = nullptr;
};

class SimEnv : public Env {
 public:
  // `group`: this process's Scheduler group; `pid` and `pid_start` name it
  // on `host`, where it is alive until killed.
  SimEnv(Scheduler& sched, SimHost& host, int group, int pid, int64_t pid_start,
         TimeMs wall_origin_ms, double clock_rate = 1.0);

  const Clock& clock() override { return clock_; }
  SimClock& sim_clock() { return clock_; }
  std::unique_ptr<Thread> StartThread(std::function<void()> body) override;
  int NewWakeFd() override;
  void SignalWakeFd(int fd) override;
  void DrainWakeFd(int fd) override;
  void CloseFd(int fd) override;
  int Poll(std::span<pollfd> fds, int64_t deadline_mono) override;
  const HostFacts& Host() override { return facts_; }
  bool ProcessAlive(int pid, int64_t start_time) override;
  bool ProcessProvablyGone(int pid, int64_t start_time) override;
  int PidfdOpen(int pid) override;
  SubprocessResult RunSubprocess(
      const SubprocessSpec& spec, StopSignal& stop,
      const std::function<void(const std::string&)>& on_control_line) override;

  // What a job's process runs once exec'd: its exit code.
  using JobCode = std::function<int(const SubprocessSpec&, SimJobProcess&)>;
  void set_job_code(JobCode code) { job_code_ = std::move(code); }
  // Called as each job's process is forked, before it execs (the moment a
  // freeze tests the start gate's last check).
  std::function<void(SimJobProcess&)> on_spawn;
  // The groups of its job processes still running.
  const std::set<int>& job_groups() const { return job_groups_; }

  // SIGKILL: the process is gone from its host (and its jobs' processes
  // with it, as their shims kill them), and what is left of its threads
  // (real threads cannot be killed) races to its end in no virtual time;
  // the caller cuts its store link and stops its worker.
  void Kill();
  bool killed() const { return killed_; }
  // Called by a wait with a deadline, once killed: jumps the clock there
  // and yields.
  void RaceTo(int64_t deadline_mono);
  int group() const { return group_; }

 private:
  struct WakeFd {
    bool signalled = false;
    // In the order they came: woken in an order that pointers' values
    // (which differ from run to run) do not decide.
    std::vector<SimThread*> waiters;
  };
  static constexpr int kFirstFd = 1 << 20;  // beyond any real fd

  Scheduler& sched_;
  SimHost& host_;
  int group_;
  HostFacts facts_;
  SimClock clock_;
  std::map<int, WakeFd> wake_fds_;
  int next_fd_ = kFirstFd;
  bool killed_ = false;
  int threads_started_ = 0;
  JobCode job_code_;
  std::set<int> job_groups_;
  std::vector<std::shared_ptr<SimJobProcess>> jobs_;  // running
  int jobs_started_ = 0;
};

}  // namespace warden::sim
