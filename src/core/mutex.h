// Mutex: std::mutex with clang's thread-safety annotations, so members
// marked GUARDED_BY(mu_) are checked (core/thread_annotations.h);
// libstdc++'s std::mutex carries none. Two guards, as in the standard
// library:
//
//   MutexLock lock(mu_);          // std::lock_guard: held to the end of scope
//   UniqueMutexLock lock(mu_);    // std::unique_lock: may Unlock/Lock, and
//   cv_.Wait(lock, pred);         //   waits on a CondVar
//
// Everything is inline over the std::mutex (and std::unique_lock) it wraps:
// the same code as before, at no cost on any path. A predicate that reads
// guarded members says so: `[&]() REQUIRES(mu_) { return done_; }` (the
// analysis cannot see that a wait calls it with the lock held).
//
// Thread safety: a Mutex is shared; a guard belongs to one thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "core/clock.h"
#include "core/thread_annotations.h"

namespace warden {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis that the calling thread holds it; no code.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class UniqueMutexLock;
  std::mutex mu_;
};

class CondVar;

// Holds `mu` from construction to the end of the scope (std::lock_guard).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// Holds `mu` like MutexLock, and may give it up and take it again, by hand
// or while waiting on a CondVar (std::unique_lock). To the analysis the
// lock stays held across a wait: the wait returns with it held.
class SCOPED_CAPABILITY UniqueMutexLock {
 public:
  explicit UniqueMutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~UniqueMutexLock() RELEASE() {}
  UniqueMutexLock(const UniqueMutexLock&) = delete;
  UniqueMutexLock& operator=(const UniqueMutexLock&) = delete;

  void Unlock() RELEASE() { lock_.unlock(); }
  void Lock() ACQUIRE() { lock_.lock(); }

  // For Clock::Wait, which waits on a CondVar with it.
  std::unique_lock<std::mutex>& native() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

// A condition variable whose waits and notifications go through a Clock
// (core/clock.h): real ones on a real clock, virtual ones in a simulation.
// Deadlines are on the clock's monotonic reading. The predicate forms loop
// until the predicate holds (or the deadline passes: false), so spurious
// wake-ups do not matter. They call the predicate with the lock held, which
// the analysis cannot tell from the lock passed in: they are not analysed,
// and the predicates say REQUIRES (see the top of this file).
class CondVar {
 public:
  explicit CondVar(const Clock& clock) : clock_(clock) {}
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void NotifyOne() { clock_.Notify(*this, false); }
  void NotifyAll() { clock_.Notify(*this, true); }

  // Until notified, the deadline, or spuriously.
  void WaitUntil(UniqueMutexLock& lock, int64_t deadline_mono) {
    clock_.Wait(*this, lock, deadline_mono);
  }
  void WaitFor(UniqueMutexLock& lock, Millis d) {
    WaitUntil(lock, clock_.MonotonicMs() + d.count());
  }
  template <typename Predicate>
  bool WaitUntil(UniqueMutexLock& lock, int64_t deadline_mono,
                 Predicate pred) NO_THREAD_SAFETY_ANALYSIS {
    while (!pred()) {
      if (clock_.MonotonicMs() >= deadline_mono) return pred();
      WaitUntil(lock, deadline_mono);
    }
    return true;
  }
  template <typename Predicate>
  bool WaitFor(UniqueMutexLock& lock, Millis d, Predicate pred) NO_THREAD_SAFETY_ANALYSIS {
    return WaitUntil(lock, clock_.MonotonicMs() + d.count(), std::move(pred));
  }
  template <typename Predicate>
  void Wait(UniqueMutexLock& lock, Predicate pred) NO_THREAD_SAFETY_ANALYSIS {
    WaitUntil(lock, kNoDeadline, std::move(pred));
  }

  const Clock& clock() const { return clock_; }
  std::condition_variable& native() { return cv_; }

 private:
  const Clock& clock_;
  std::condition_variable cv_;
};

}  // namespace warden
