#include "scheduler.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>

namespace warden::sim {
namespace {

// A thread holding the baton this long in real time is blocked outside the
// scheduler: on a mutex held by a parked thread, or in a real wait.
constexpr std::chrono::seconds kStuck{60};

// Threads woken at one moment take their turns this many virtual µs apart
// at most, in an order drawn from the seed.
constexpr int64_t kJitterUs = 20;

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "sim scheduler: %s\n", why.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace

// given_: 0 empty, 1 given, 2 empty with its taker asleep on the futex.
void Baton::Give() {
  if (given_.exchange(1, std::memory_order_release) == 2) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&given_), FUTEX_WAKE_PRIVATE, 1, nullptr,
            nullptr, 0);
  }
}

void Baton::Take() { TakeFor(-1); }

bool Baton::TakeFor(int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (true) {
    uint32_t seen = given_.load(std::memory_order_relaxed);
    if (seen == 1) {
      if (given_.compare_exchange_weak(seen, 0, std::memory_order_acquire)) return true;
      continue;
    }
    if (seen == 0 && !given_.compare_exchange_weak(seen, 2, std::memory_order_relaxed)) continue;
    timespec rel{};
    if (seconds >= 0) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::nanoseconds(0)) return false;
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      rel = {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    }
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&given_), FUTEX_WAIT_PRIVATE, 2,
            seconds >= 0 ? &rel : nullptr, nullptr, 0);
  }
}

namespace {

// This process's CPU for its simulated threads: the first allowed one that
// no other simulation on this machine holds (a lock file per CPU, held
// until the process exits), so that ctest -j2's two shards do not share
// one CPU and leave the other idle; the current one when all are taken.
int ChooseCpu(const cpu_set_t& allowed) {
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    const std::string path = "/tmp/warden-sim-cpu-" + std::to_string(cpu) + ".lock";
    const int fd = open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0666);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return cpu;  // fd stays open: the lock is held
    close(fd);
  }
  return sched_getcpu();
}

}  // namespace

Scheduler::Scheduler(uint64_t seed) : seed_(seed), rng_(seed) {
  if (sched_getaffinity(0, sizeof(driver_cpus_), &driver_cpus_) != 0) return;
  static const int cpu = ChooseCpu(driver_cpus_);
  if (cpu < 0) return;
  CPU_ZERO(&cpu_);
  CPU_SET(cpu, &cpu_);
  pinned_ = true;
  PinToCpu();
}

// Speed only: a thread the kernel will not pin runs anywhere, as correctly.
void Scheduler::PinToCpu() {
  if (pinned_) pthread_setaffinity_np(pthread_self(), sizeof(cpu_), &cpu_);
}

Scheduler::~Scheduler() {
  std::string running;
  for (const auto& t : threads_) {
    if (!t->exited_) running += " " + t->name_;
  }
  if (!running.empty()) Die("destroyed while threads still run:" + running);
  for (const auto& t : threads_) {
    if (t->thread_.joinable()) t->thread_.join();
  }
  if (pinned_) pthread_setaffinity_np(pthread_self(), sizeof(driver_cpus_), &driver_cpus_);
}

SimThread* Scheduler::Spawn(std::string name, int group, std::function<void()> body) {
  auto owned = std::make_unique<SimThread>();
  SimThread* t = owned.get();
  t->name_ = std::move(name);
  t->group_ = group;
  t->parked_ = true;
  threads_.push_back(std::move(owned));
  t->thread_ = std::thread([this, t, body = std::move(body)]() mutable {
    PinToCpu();
    t->go_.Take();
    body();
    body = nullptr;  // its captures go while this thread holds the baton
    t->exited_ = true;
    for (SimThread* j : t->joiners_) Wake(j);
    t->joiners_.clear();
    to_join_.push_back(t);
    PassOn(nullptr);
  });
  Schedule(t, now_);
  return t;
}

void Scheduler::At(VirtUs at, std::function<void()> fn) {
  Event e;
  e.fn = std::move(fn);
  queue_.emplace(std::make_pair(std::max(at, now_), ++seq_), std::move(e));
}

void Scheduler::Schedule(SimThread* t, VirtUs at) {
  Event e;
  e.thread = t;
  e.turn = ++seq_;
  t->turn_ = e.turn;
  queue_.emplace(std::make_pair(std::max(at, now_), e.turn), std::move(e));
}

bool Scheduler::Park(VirtUs deadline) {
  SimThread* self = current();
  if (self == nullptr) Die("Park called on the driver");
  self->parked_ = true;
  self->woken_ = false;
  if (deadline == kNever) {
    self->turn_ = ++seq_;  // no turn until woken
  } else {
    Schedule(self, deadline);
  }
  PassOn(self);
  return self->woken_;
}

SimThread* Scheduler::NextTurn() {
  while (!queue_.empty()) {
    auto it = queue_.begin();
    if (it->first.first > until_ || it->second.fn) return nullptr;
    now_ = std::max(now_, it->first.first);
    SimThread* t = it->second.thread;
    const uint64_t turn = it->second.turn;
    queue_.erase(it);
    if (turn != t->turn_ || !t->parked_ || t->exited_) continue;  // superseded
    if (frozen(t->group_)) {
      frozen_due_[t->group_].push_back(t);
      continue;
    }
    return t;
  }
  return nullptr;
}

void Scheduler::StartTurn(SimThread* t) {
  current_.store(t, std::memory_order_relaxed);
  t->parked_ = false;
  ++turns_;
  if (trace_on_) trace_ += std::to_string(now_) + " " + t->name_ + "\n";
}

void Scheduler::PassOn(SimThread* self) {
  SimThread* next = NextTurn();
  if (next != nullptr && next == self) {
    StartTurn(self);
    return;
  }
  if (next != nullptr) {
    StartTurn(next);
    next->go_.Give();
  } else {
    current_.store(nullptr, std::memory_order_relaxed);
    driver_go_.Give();
  }
  if (self != nullptr) self->go_.Take();
}

void Scheduler::Wake(SimThread* t) {
  if (!t->parked_ || t->exited_ || t->woken_) return;
  t->woken_ = true;
  Schedule(t, now_ + rng_.Range(1, kJitterUs));
}

void Scheduler::WakeGroup(int group) {
  for (const auto& t : threads_) {
    if (t->group_ == group) Wake(t.get());
  }
}

void Scheduler::Join(SimThread* t) {
  SimThread* self = current();
  if (self == nullptr) Die("Join called on the driver");
  while (!t->exited_) {
    t->joiners_.push_back(self);
    Park(kNever);
  }
}

void Scheduler::Freeze(int group) { frozen_[group] = true; }

void Scheduler::Thaw(int group) {
  frozen_[group] = false;
  thawed_at_[group] = now_;
  std::vector<SimThread*> due = std::move(frozen_due_[group]);
  frozen_due_.erase(group);
  // Turns missed while frozen; a thread that then parks again was woken
  // spuriously, which every wait allows.
  for (SimThread* t : due) {
    if (t->parked_ && !t->exited_) Schedule(t, now_ + rng_.Range(1, kJitterUs));
  }
}

bool Scheduler::frozen(int group) const {
  auto it = frozen_.find(group);
  return it != frozen_.end() && it->second;
}

VirtUs Scheduler::thawed_at(int group) const {
  auto it = thawed_at_.find(group);
  return it == thawed_at_.end() ? -1 : it->second;
}

bool Scheduler::RunUntil(VirtUs until) {
  until_ = until;
  while (true) {
    for (SimThread* t : to_join_) {
      if (t->thread_.joinable()) t->thread_.join();
    }
    to_join_.clear();
    if (queue_.empty()) break;
    auto it = queue_.begin();
    if (it->first.first > until) {
      now_ = std::max(now_, until);
      return true;
    }
    if (it->second.fn) {
      now_ = std::max(now_, it->first.first);
      std::function<void()> fn = std::move(it->second.fn);
      queue_.erase(it);
      fn();
      continue;
    }
    SimThread* t = NextTurn();
    if (t == nullptr) continue;
    StartTurn(t);
    t->go_.Give();
    // Back when a thread meets the driver's next event: turns in between
    // pass from thread to thread.
    if (!driver_go_.TakeFor(kStuck.count())) {
      SimThread* holder = current();
      Die("seed " + std::to_string(seed_) + ": thread '" +
          (holder != nullptr ? holder->name_ : std::string("?")) +
          "' has not parked for " + std::to_string(kStuck.count()) +
          " s: it waits outside the Env (a real wait, or a mutex a parked thread holds)");
    }
  }
  now_ = std::max(now_, until == kNever ? now_ : until);
  return false;
}

}  // namespace warden::sim
