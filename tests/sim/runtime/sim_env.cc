#include "sim_env.h"

#include "env/shim.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/mutex.h"

namespace warden::sim {
namespace {

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "sim env: %s\n", why.c_str());
  std::fflush(stderr);
  std::abort();
}

SimThread* Self(Scheduler& sched, const char* what) {
  SimThread* self = sched.current();
  if (self == nullptr) Die(std::string(what) + " on the driver: it must not wait");
  return self;
}

class SimThreadHandle : public Thread {
 public:
  SimThreadHandle(Scheduler& sched, SimThread* t) : sched_(sched), t_(t) {}
  ~SimThreadHandle() override {
    if (!t_->exited()) Die("thread '" + t_->name() + "' dropped before it ended");
  }
  void Join() override { sched_.Join(t_); }

 private:
  Scheduler& sched_;
  SimThread* t_;
};

}  // namespace

VirtUs SimClock::WhenMonotonic(int64_t mono_ms) const {
  if (mono_ms == kNoDeadline) return kNever;
  const double at = std::ceil(static_cast<double>(mono_ms * 1000 - warp_us_) / rate_);
  if (at >= static_cast<double>(kNever / 2)) return kNever;
  // The quotient may round below the moment (at a rate other than 1): a
  // wait that woke before its deadline would wait for it again, at once,
  // forever.
  VirtUs v = static_cast<VirtUs>(at);
  while (static_cast<int64_t>(static_cast<double>(v) * rate_) + warp_us_ < mono_ms * 1000) ++v;
  return v;
}

void SimClock::Wait(CondVar& cv, UniqueMutexLock& lock, int64_t deadline_mono) const {
  SimThread* self = Self(sched_, "a wait");
  if (MonotonicMs() >= deadline_mono) return;
  VirtUs until = WhenMonotonic(deadline_mono);
  if (racing_ && deadline_mono != kNoDeadline) {
    WarpTo(deadline_mono);
    // A turn for the others (a µs on: threads woken meanwhile come first).
    until = sched_.now() + 1;
  }
  waiters_[&cv].push_back(self);
  lock.native().unlock();
  sched_.Park(until);
  auto it = waiters_.find(&cv);
  if (it != waiters_.end()) {
    std::erase(it->second, self);
    if (it->second.empty()) waiters_.erase(it);
  }
  // Only one thread runs at a time: a mutex still held is held by a parked
  // thread, which would never let it go.
  if (!lock.native().try_lock()) {
    Die("'" + self->name() + "' woke to a mutex a parked thread holds");
  }
}

void SimClock::Notify(CondVar& cv, bool all) const {
  auto it = waiters_.find(&cv);
  if (it == waiters_.end()) return;
  std::deque<SimThread*>& q = it->second;
  while (!q.empty()) {
    SimThread* t = q.front();
    q.pop_front();
    sched_.Wake(t);
    if (!all) break;
  }
  if (q.empty()) waiters_.erase(it);
}

SimEnv::SimEnv(Scheduler& sched, SimHost& host, int group, int pid, int64_t pid_start,
               TimeMs wall_origin_ms, double clock_rate)
    : sched_(sched), host_(host), group_(group), clock_(sched, wall_origin_ms, clock_rate) {
  facts_.node = host.name;
  facts_.boot_id = host.boot_id;
  facts_.pid_ns = "pid:[" + host.name + "]";
  facts_.pid = pid;
  facts_.pid_start = pid_start;
  host_.live.insert({pid, pid_start});
  clock_.StepWall(host.wall_step_ms);  // its host's clock, as stepped so far
}

std::unique_ptr<Thread> SimEnv::StartThread(std::function<void()> body) {
  // Appended, not concatenated: GCC 12 warns (-Wrestrict) on "p" + ....
  std::string name = "p";
  name += std::to_string(facts_.pid);
  name += '.';
  name += std::to_string(++threads_started_);
  return std::make_unique<SimThreadHandle>(sched_, sched_.Spawn(name, group_, std::move(body)));
}

int SimEnv::NewWakeFd() {
  const int fd = next_fd_++;
  wake_fds_[fd];
  return fd;
}

void SimEnv::SignalWakeFd(int fd) {
  auto it = wake_fds_.find(fd);
  if (it == wake_fds_.end()) return;
  it->second.signalled = true;
  for (SimThread* t : it->second.waiters) sched_.Wake(t);
}

void SimEnv::DrainWakeFd(int fd) {
  auto it = wake_fds_.find(fd);
  if (it != wake_fds_.end()) it->second.signalled = false;
}

void SimEnv::CloseFd(int fd) {
  if (fd >= kFirstFd) {
    wake_fds_.erase(fd);
  } else if (fd >= 0) {
    close(fd);
  }
}

int SimEnv::Poll(std::span<pollfd> fds, int64_t deadline_mono) {
  SimThread* self = Self(sched_, "a poll");
  while (true) {
    int ready = 0;
    for (pollfd& p : fds) {
      p.revents = 0;
      if (p.fd >= kFirstFd) {
        auto it = wake_fds_.find(p.fd);
        if (it != wake_fds_.end() && it->second.signalled) p.revents = POLLIN;
      } else if (p.fd >= 0) {
        // A real fd (a store's session socket): looked at, never waited on.
        pollfd one{p.fd, p.events, 0};
        if (poll(&one, 1, 0) > 0) p.revents = one.revents;
      }
      if (p.revents) ++ready;
    }
    if (ready > 0 || clock_.MonotonicMs() >= deadline_mono) return ready;
    for (pollfd& p : fds) {
      if (auto it = wake_fds_.find(p.fd); it != wake_fds_.end()) {
        std::vector<SimThread*>& w = it->second.waiters;
        if (std::find(w.begin(), w.end(), self) == w.end()) w.push_back(self);
      }
    }
    if (killed_ && deadline_mono != kNoDeadline) {
      RaceTo(deadline_mono);
    } else {
      sched_.Park(clock_.WhenMonotonic(deadline_mono));
    }
    for (pollfd& p : fds) {
      if (auto it = wake_fds_.find(p.fd); it != wake_fds_.end()) {
        std::erase(it->second.waiters, self);
      }
    }
  }
}

bool SimEnv::ProcessAlive(int pid, int64_t start_time) {
  return host_.live.count({pid, start_time}) > 0;
}

bool SimEnv::ProcessProvablyGone(int pid, int64_t start_time) {
  return !ProcessAlive(pid, start_time);
}

// No pidfds: deaths on the host are found by the periodic pass.
int SimEnv::PidfdOpen(int) { return -1; }

// As env/subprocess.h's, in virtual time: the job's process execs a moment
// after the fork, unless its start deadline has passed by then (the shim's
// check); on a stop or the timeout its group gets SIGTERM, then SIGKILL
// after the grace (at once for a fence). The supervisor looks at its stop
// signal every 10 ms (the real one polls its eventfd).
SubprocessResult SimEnv::RunSubprocess(
    const SubprocessSpec& spec, StopSignal& stop,
    const std::function<void(const std::string&)>& on_control_line) {
  (void)on_control_line;  // no control lines yet
  SubprocessResult r;
  if (stop.requested()) {
    r.stopped = stop.reason();
    return r;
  }
  if (!job_code_) {
    r.spawn_error = "sim: no job code for commands";
    return r;
  }
  const int64_t began = clock_.MonotonicMs();
  auto p = std::make_shared<SimJobProcess>();
  p->group = group_ * 1000 + ++jobs_started_;
  p->supervisor = Self(sched_, "a subprocess");
  job_groups_.insert(p->group);
  jobs_.push_back(p);
  p->thread = sched_.Spawn("job" + std::to_string(p->group), p->group, [this, p, spec] {
    sched_.Park(sched_.now() + 100);  // fork to exec
    if (!p->killed) {
      if (spec.start_by_mono_ms &&
          shim::StartDeadlinePassed(*spec.start_by_mono_ms, clock_.MonotonicMs())) {
        p->missed_start = true;
      } else {
        p->exit_code = job_code_(spec, *p);
      }
    }
    p->exited = true;
    sched_.Wake(p->supervisor);
  });
  if (on_spawn) on_spawn(*p);
  const int64_t timeout_at = began + spec.timeout.count();
  int64_t kill_at = -1;
  auto signal = [&](bool kill) {
    (kill ? p->killed : p->term) = true;
    sched_.Wake(p->thread);
  };
  while (!p->exited) {
    const int64_t now = clock_.MonotonicMs();
    if (killed_ && !p->killed) signal(true);
    if (!p->term && stop.requested()) {
      r.stopped = stop.reason();
      signal(false);
      kill_at = r.stopped == StopReason::kFence ? now : now + spec.kill_grace.count();
    }
    if (!p->term && now >= timeout_at) {
      r.timed_out = true;
      signal(false);
      kill_at = now + spec.kill_grace.count();
    }
    if (kill_at >= 0 && now >= kill_at && !p->killed) signal(true);
    if (p->exited) break;
    int64_t next = now + 10;
    if (kill_at > now) next = std::min(next, kill_at);
    if (timeout_at > now) next = std::min(next, timeout_at);
    sched_.Park(killed_ ? sched_.now() + 1 : clock_.WhenMonotonic(next));
  }
  job_groups_.erase(p->group);
  std::erase(jobs_, p);
  r.elapsed = Millis(clock_.MonotonicMs() - began);
  if (p->missed_start) {
    r.missed_start_deadline = true;
    return r;
  }
  r.started = true;
  if (p->killed) {
    r.signal = 9;
  } else if (p->term && p->exit_code != 0) {
    r.signal = 15;
  } else {
    r.exit_code = p->exit_code;
  }
  return r;
}

void SimEnv::Kill() {
  killed_ = true;
  for (const auto& p : jobs_) {
    p->killed = true;
    sched_.Thaw(p->group);  // SIGKILL ends a stopped process too
    sched_.Wake(p->thread);
  }
  host_.live.erase({facts_.pid, facts_.pid_start});
  clock_.Race();
  sched_.Thaw(group_);
  // Its waits with later deadlines race too, from now.
  sched_.WakeGroup(group_);
}

void SimEnv::RaceTo(int64_t deadline_mono) {
  clock_.WarpTo(deadline_mono);
  sched_.Park(sched_.now() + 1);
}

}  // namespace warden::sim
