// Mutex: std::mutex with clang's thread-safety annotations, so members
// marked GUARDED_BY(mu_) are checked (core/thread_annotations.h);
// libstdc++'s std::mutex carries none. Two guards, as in the standard
// library:
//
//   MutexLock lock(mu_);          // std::lock_guard: held to the end of scope
//   UniqueMutexLock lock(mu_);    // std::unique_lock: may Unlock/Lock, and
//   lock.Wait(cv_, pred);         //   waits on a std::condition_variable
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
// or while waiting on a condition variable (std::unique_lock). To the
// analysis the lock stays held across a wait: the wait returns with it held.
class SCOPED_CAPABILITY UniqueMutexLock {
 public:
  explicit UniqueMutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~UniqueMutexLock() RELEASE() {}
  UniqueMutexLock(const UniqueMutexLock&) = delete;
  UniqueMutexLock& operator=(const UniqueMutexLock&) = delete;

  void Unlock() RELEASE() { lock_.unlock(); }
  void Lock() ACQUIRE() { lock_.lock(); }

  void Wait(std::condition_variable& cv) { cv.wait(lock_); }
  template <typename Predicate>
  void Wait(std::condition_variable& cv, Predicate pred) {
    cv.wait(lock_, std::move(pred));
  }
  template <typename Rep, typename Period>
  std::cv_status WaitFor(std::condition_variable& cv,
                         const std::chrono::duration<Rep, Period>& timeout) {
    return cv.wait_for(lock_, timeout);
  }
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(std::condition_variable& cv, const std::chrono::duration<Rep, Period>& timeout,
               Predicate pred) {
    return cv.wait_for(lock_, timeout, std::move(pred));
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace warden
