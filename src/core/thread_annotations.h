// Clang thread-safety annotations: the lock discipline, written where the
// compiler can check it (clang's -Wthread-safety; scripts/thread-safety.sh
// runs it over the library and the CLI in `make test`).
//
//   Mutex mu_;
//   int count_ GUARDED_BY(mu_) = 0;     // read or written only with mu_ held
//   void BumpLocked() REQUIRES(mu_);    // callers hold mu_
//
// The names follow clang's documentation (and Abseil's ABSL_ macros). With
// any other compiler they expand to nothing: annotations only, no code.
// See core/mutex.h for a mutex and guards that carry them.
#pragma once

#if defined(__clang__)
#define WARDEN_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define WARDEN_THREAD_ANNOTATION(x)
#endif

// A class that is a lock (Mutex), or a scoped guard of one (MutexLock).
#define CAPABILITY(x) WARDEN_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY WARDEN_THREAD_ANNOTATION(scoped_lockable)

// A member read or written only with the lock held; for a pointer, the
// data it points to (the pointer itself is set once, unguarded).
#define GUARDED_BY(x) WARDEN_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) WARDEN_THREAD_ANNOTATION(pt_guarded_by(x))

// A function whose callers hold the lock (the codebase names them
// ...Locked), or must not (it takes the lock itself).
#define REQUIRES(...) WARDEN_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) WARDEN_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// A function that takes, or gives up, the lock.
#define ACQUIRE(...) WARDEN_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) WARDEN_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) WARDEN_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))

// Tells the analysis the lock is held here (checked by nothing at run time).
#define ASSERT_CAPABILITY(x) WARDEN_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) WARDEN_THREAD_ANNOTATION(lock_returned(x))

// Turns the analysis off for one function: say why next to it.
#define NO_THREAD_SAFETY_ANALYSIS WARDEN_THREAD_ANNOTATION(no_thread_safety_analysis)
