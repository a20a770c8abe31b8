// Child processes for tests: spawn with explicit argv and captured stdio
// (optionally inside a network namespace, with a host name of its own),
// signal, wait with a deadline, run to completion, and clean up every
// descendant. Shared by the integration, bad-input, partition, clock-step,
// start-gate and chaos tests.
//
// A test that starts workers makes itself a child subreaper
// (PR_SET_CHILD_SUBREAPER), so the processes a worker leaves behind (shims,
// jobs, their background children) come to it. ReapChildren reaps every
// exited child and keeps the statuses a Child or RunToExit still waits for;
// KillAllDescendants SIGKILLs them all at the end of a test.
//
//   auto c = Child::Spawn({WARDEN_BIN, "worker", ...}, dir + "/w.out", dir + "/w.err");
//   ASSERT_TRUE(c->WaitExit(Millis(5000))) << c->Stderr();
//   CmdResult r = RunToExit({"/bin/true"}, dir + "/true", Millis(5000));
//
// Thread safety: none (one thread spawns, waits and reaps), except
// GroupAlive, ProcId and Gone (any thread).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proc.h"

namespace warden::testing {

using Millis = std::chrono::milliseconds;

// Where a child runs: a network namespace (/run/netns/NAME, as `ip netns
// exec` enters it) and a UTS namespace of its own with this host name, so
// two children on one machine look like two hosts to warden.
struct Host {
  std::string netns;
  std::string hostname;
};

struct SpawnOptions {
  std::optional<Host> host = std::nullopt;  // none: ours
  std::vector<std::string> env = {};        // "K=V", added to ours (replacing an inherited K)
  // PR_SET_PDEATHSIG: SIGKILLed when the thread that spawned it exits, so a
  // test killed outright leaves no worker running.
  bool die_with_parent = false;
};

// A long-running child with stdout and stderr in files, stdin /dev/null.
class Child {
 public:
  // `argv[0]` is the program's path (no PATH search, no shell). Throws
  // std::runtime_error if the files, the namespace or fork fail.
  static std::unique_ptr<Child> Spawn(const std::vector<std::string>& argv,
                                      const std::string& out_path, const std::string& err_path,
                                      const SpawnOptions& options = {});
  ~Child();  // Kill()
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // false if it exited, or kill() failed.
  bool Signal(int sig);
  // SIGKILL and reap.
  void Kill();
  // Whether it exited (and was reaped); never blocks.
  bool Exited();
  bool WaitExit(Millis timeout);
  // Exit code, or 128+signal; -1 if it has not exited or the status is
  // unknown (reaped elsewhere).
  int ExitCode() const;
  std::string Stdout() const { return proc::ReadFile(out_path_); }
  std::string Stderr() const { return proc::ReadFile(err_path_); }
  const std::string& err_path() const { return err_path_; }

 private:
  Child() = default;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string out_path_, err_path_;
};

struct CmdResult {
  int exit_code = -1;  // 128+signal if killed; -1 if it could not run
  bool timed_out = false;
  std::string out, err;
  std::string Describe() const;  // exit code and both outputs, for messages
};

// Runs `argv` to completion (SIGKILLed after `timeout`), with stdout and
// stderr through the files `base`.out and `base`.err (removed after) and
// `env` added to ours. Does not fail the test: see `timed_out`.
CmdResult RunToExit(const std::vector<std::string>& argv, const std::string& base, Millis timeout,
                    const std::vector<std::string>& env = {});
// The same, with the output files named uniquely in `scratch_dir`.
CmdResult RunInDir(const std::vector<std::string>& argv, const std::string& scratch_dir,
                   Millis timeout, const std::vector<std::string>& env = {});

// Reaps every exited child of this process and keeps the statuses of those
// a Child or RunToExit will ask about.
void ReapChildren();
// SIGKILLs every descendant of this process that still runs (and the
// process group of each that leads one), reaping as it goes, until none
// runs; false if some still ran after ~5 s.
bool KillAllDescendants();
// Whether any process of group `pgid` still runs (zombies do not count).
bool GroupAlive(pid_t pgid);

// A process identified by pid and start time, so pid reuse cannot fool a
// liveness check. Zombies count as gone.
struct ProcId {
  pid_t pid = -1;
  int64_t start = -1;
};
ProcId Identify(pid_t pid);
bool Gone(const ProcId& p);

// An executable by name: PATH first, then the sbin directories (ctest may
// run without them in PATH).
std::optional<std::string> FindTool(const std::string& name);

}  // namespace warden::testing
