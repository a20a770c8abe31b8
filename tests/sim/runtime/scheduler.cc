#include "scheduler.h"

#include <chrono>
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

Scheduler::Scheduler(uint64_t seed) : rng_(seed) {}

Scheduler::~Scheduler() {
  std::string running;
  for (const auto& t : threads_) {
    if (!t->exited_) running += " " + t->name_;
  }
  if (!running.empty()) Die("destroyed while threads still run:" + running);
  for (const auto& t : threads_) {
    if (t->thread_.joinable()) t->thread_.join();
  }
}

SimThread* Scheduler::Spawn(std::string name, int group, std::function<void()> body) {
  auto owned = std::make_unique<SimThread>();
  SimThread* t = owned.get();
  t->name_ = std::move(name);
  t->group_ = group;
  t->parked_ = true;
  threads_.push_back(std::move(owned));
  t->thread_ = std::thread([this, t, body = std::move(body)]() mutable {
    t->go_.acquire();
    body();
    body = nullptr;  // its captures go while this thread holds the baton
    t->exited_ = true;
    for (SimThread* j : t->joiners_) Wake(j);
    t->joiners_.clear();
    current_ = nullptr;
    driver_go_.release();
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
  SimThread* self = current_;
  if (self == nullptr) Die("Park called on the driver");
  self->parked_ = true;
  self->woken_ = false;
  if (deadline == kNever) {
    self->turn_ = ++seq_;  // no turn until woken
  } else {
    Schedule(self, deadline);
  }
  Handoff(self);
  return self->woken_;
}

void Scheduler::Handoff(SimThread* self) {
  current_ = nullptr;
  driver_go_.release();
  self->go_.acquire();
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
  SimThread* self = current_;
  if (self == nullptr) Die("Join called on the driver");
  while (!t->exited_) {
    t->joiners_.push_back(self);
    Park(kNever);
  }
}

void Scheduler::Freeze(int group) { frozen_[group] = true; }

void Scheduler::Thaw(int group) {
  frozen_[group] = false;
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

void Scheduler::GiveTurn(SimThread* t) {
  current_ = t;
  t->parked_ = false;
  ++turns_;
  if (trace_on_) trace_ += std::to_string(now_) + " " + t->name_ + "\n";
  t->go_.release();
  if (!driver_go_.try_acquire_for(kStuck)) {
    Die("thread '" + t->name_ + "' has not parked for " + std::to_string(kStuck.count()) +
        " s: it waits outside the Env (a real wait, or a mutex a parked thread holds)");
  }
  if (t->exited_ && t->thread_.joinable()) t->thread_.join();
}

bool Scheduler::RunUntil(VirtUs until) {
  while (!queue_.empty()) {
    auto it = queue_.begin();
    if (it->first.first > until) {
      now_ = std::max(now_, until);
      return true;
    }
    now_ = std::max(now_, it->first.first);
    Event e = std::move(it->second);
    queue_.erase(it);
    if (e.fn) {
      e.fn();
      continue;
    }
    SimThread* t = e.thread;
    if (e.turn != t->turn_ || !t->parked_ || t->exited_) continue;  // superseded
    if (frozen(t->group_)) {
      frozen_due_[t->group_].push_back(t);
      continue;
    }
    GiveTurn(t);
  }
  now_ = std::max(now_, until == kNever ? now_ : until);
  return false;
}

}  // namespace warden::sim
