// Child processes for the integration tests: spawn with explicit argv and
// captured stdio, signal, wait with a deadline, and find every descendant.
//
// Thread safety: none; one test thread drives everything.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proc.h"

namespace wt {

using Millis = std::chrono::milliseconds;
using SteadyTime = std::chrono::steady_clock::time_point;

// Generous: a loaded 2-core box running the suite twice in parallel, once
// under ASan. Conditions normally hold long before this.
inline constexpr Millis kDeadline{20'000};

// Polls `cond` every `every` until it holds or `timeout` passes; returns
// whether it held.
bool WaitFor(const std::function<bool()>& cond, Millis timeout = kDeadline,
             Millis every = Millis(25));

int64_t MillisSince(SteadyTime t);

// A process identified by pid and start time, so pid reuse cannot fool a
// liveness check. Zombies count as gone.
struct ProcId {
  pid_t pid = -1;
  int64_t start = -1;
};
ProcId Identify(pid_t pid);
bool Gone(const ProcId& p);

// A child process with its stderr (and stdout) captured to files.
class Child {
 public:
  // `argv[0]` is the program path. stdout goes to `out_path`, stderr to
  // `err_path` (both truncated), stdin from /dev/null.
  static std::unique_ptr<Child> Spawn(const std::vector<std::string>& argv,
                                      const std::string& out_path, const std::string& err_path);
  ~Child();

  pid_t pid() const { return pid_; }
  bool Signal(int sig);
  // SIGKILL and reap.
  void Kill();
  // True once it exited (reaped); `status` is the raw wait status.
  bool Exited();
  bool WaitExit(Millis timeout);
  // Exit code, or 128+signal, or -1 if not exited.
  int ExitCode() const;
  std::string Stdout() const;
  std::string Stderr() const;
  const std::string& err_path() const { return err_path_; }

 private:
  Child() = default;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string out_path_, err_path_;
};

using proc::AllThreadsStopped;
using proc::ReadFile;
// SIGKILLs every descendant of this process (with the subreaper flag set,
// that is every process a test started, directly or not) until none runs,
// and reaps those that became our children.
void KillAllDescendants();

}  // namespace wt
