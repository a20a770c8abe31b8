// Scheduler: runs real threads one at a time, in virtual time, in an order
// fixed by a seed. It is how the simulation runs warden's real worker
// runtime (src/runtime) rather than a model of it: every thread the runtime
// starts through its Env is a Scheduler thread, and every place it waits
// (a CondVar, a poll, a sleep, a join) parks it here (sim_env.h).
//
// One thread holds the baton at a time: the driver (the thread that calls
// Run*) or one simulated thread. A simulated thread runs until it parks;
// then it takes the next event from the queue itself: another thread's turn
// is handed straight to that thread (its own, when it is next, costs no
// switch at all); a function of the world, such as a fault, or the end of
// the run goes back to the driver. Threads
// woken at the same moment take their turns in an order drawn from the
// seed, a few virtual µs apart. So a run is a function of its seed, and
// a thread never runs at the same time as another: the runtime's mutexes
// are never contended, except by a thread that parks while holding one,
// which the scheduler reports (it would deadlock a real worker too,
// sooner or later).
//
// All its threads, the driver's included while the Scheduler lives, run on
// one CPU: a handoff is then a switch on that CPU, not a wake-up of
// another (about 2 µs a turn instead of 17 on this 2-core machine). Each
// process takes a CPU no other simulation holds, when one is free.
//
// Thread safety: the methods marked "from the running thread" are called by
// whichever thread holds the baton; Spawn and At also from the driver
// before or between runs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <sched.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "prng.h"

namespace warden::sim {

using VirtUs = int64_t;  // virtual time, µs since the run began
inline constexpr VirtUs kNever = INT64_MAX;

class Scheduler;

// A handoff between two threads: Give wakes the one in Take. A futex word
// rather than std::binary_semaphore, whose waits spin through sched_yield
// (most of a run's time went there).
class Baton {
 public:
  void Give();
  void Take();
  // false: not given within `seconds`.
  bool TakeFor(int seconds);

 private:
  std::atomic<uint32_t> given_{0};
};

// A simulated thread. Owned by the Scheduler; handles stay valid until it
// is destroyed.
class SimThread {
 public:
  const std::string& name() const { return name_; }
  bool exited() const { return exited_; }
  int group() const { return group_; }

 private:
  friend class Scheduler;
  std::string name_;
  int group_ = 0;  // a simulated process: frozen and thawed together
  Baton go_;
  std::thread thread_;
  bool parked_ = false;
  bool exited_ = false;
  bool woken_ = false;    // the last park ended by Wake, not its deadline
  uint64_t turn_ = 0;     // the pending turn event's; others are stale
  std::vector<SimThread*> joiners_;
};

class Scheduler {
 public:
  explicit Scheduler(uint64_t seed);
  // Every thread must have exited (Run until they do).
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  VirtUs now() const { return now_; }
  // The thread holding the baton; null on the driver.
  SimThread* current() const { return current_.load(std::memory_order_relaxed); }

  // A new thread in `group` running `body`; it takes its first turn now.
  SimThread* Spawn(std::string name, int group, std::function<void()> body);
  // Runs `fn` on the driver at virtual time `at`.
  void At(VirtUs at, std::function<void()> fn);

  // From the running thread: gives up the baton until Wake or `deadline`.
  // true: woken.
  bool Park(VirtUs deadline);
  // From the running thread (or the driver): a parked thread takes a turn
  // soon, unless its group is frozen (then when thawed).
  void Wake(SimThread* t);
  // Wakes every parked thread of `group` (each wait allows a spurious
  // wake-up).
  void WakeGroup(int group);
  // From the running thread: until `t` has exited.
  void Join(SimThread* t);

  // A frozen group's threads take no turns; thawed, those due meanwhile
  // take them at once.
  void Freeze(int group);
  void Thaw(int group);
  bool frozen(int group) const;
  // When `group` was last thawed; -1: never.
  VirtUs thawed_at(int group) const;

  // From the driver: runs events up to virtual time `until` (inclusive),
  // or until none is left. false: none left.
  bool RunUntil(VirtUs until);
  // Each turn taken, "time thread" per line, when tracing.
  void set_trace(bool on) { trace_on_ = on; }
  const std::string& trace() const { return trace_; }
  int64_t turns() const { return turns_; }

 private:
  struct Event {
    SimThread* thread = nullptr;  // a turn, or
    std::function<void()> fn;     // a function of the world
    uint64_t turn = 0;
  };
  void Schedule(SimThread* t, VirtUs at);
  // The next thread due by `until_`, its event taken from the queue and
  // `now_` moved to it; null when the next event is the driver's (a
  // function of the world, or past `until_`, or none).
  SimThread* NextTurn();
  // From the running thread `self` (null: one that has exited): passes
  // the baton on to the next turn or to the driver.
  void PassOn(SimThread* self);
  void StartTurn(SimThread* t);

  void PinToCpu();

  uint64_t seed_;
  Rng rng_;
  cpu_set_t cpu_{};          // where every thread runs
  cpu_set_t driver_cpus_{};  // the driver's own, given back at the end
  bool pinned_ = false;
  VirtUs now_ = 0;
  uint64_t seq_ = 0;
  std::map<std::pair<VirtUs, uint64_t>, Event> queue_;
  std::vector<std::unique_ptr<SimThread>> threads_;
  std::map<int, std::vector<SimThread*>> frozen_due_;  // group -> threads due
  std::map<int, bool> frozen_;
  std::map<int, VirtUs> thawed_at_;
  std::atomic<SimThread*> current_{nullptr};
  VirtUs until_ = 0;  // of the RunUntil under way
  Baton driver_go_;
  std::vector<SimThread*> to_join_;  // exited; joined by the driver
  bool trace_on_ = false;
  std::string trace_;
  int64_t turns_ = 0;
};

}  // namespace warden::sim
