// Runs one shell command as a job, supervised so that a killed worker never
// leaves the job running unsupervised.
//
// Process tree:   worker ── shim ── /bin/sh -c COMMAND (own process group)
//
// The shim is the warden-shim program (SubprocessSpec::shim_path, started
// with posix_spawn), or where there is none a fork of the worker that never
// execs; either way it runs shim::Run, holding one end of a socketpair with
// the worker. It reports the job's pid (= pgid), waits for
// the job on a pidfd, and sends the job's wait status back. If the worker
// dies for any reason (SIGKILL included), the shim sees EOF on the socket and
// SIGKILLs the job's whole process group. When the job's main process exits,
// the shim SIGKILLs whatever is left in its group before reaping it, so no
// background process outlives its job (a process that leaves the group, e.g.
// via setsid, escapes; only cgroups could prevent that). Signals to the
// group go through the shim, which has not yet reaped the group leader, so
// a reused pid is never signalled (the one exception: if the shim itself
// dies, the worker SIGKILLs the group directly).
//
// The job runs no code before the worker knows its pgid, and none once its
// start deadline has passed (SubprocessSpec::start_by_mono_ms, checked by
// the job's own process just before exec); after exec it needs nothing
// from the worker to begin (its stdin is a file). The shim lives in
// a process group of its own and ignores terminal/termination signals, so
// even `kill -9 -<worker pgid>` leaves it to clean up. It does not notice a
// stopped (SIGSTOP) or hung worker: jobs keep running, and timeouts and
// stops are enforced again only once the worker runs.
//
// Requirements on the embedding process: SIGCHLD must not be SIG_IGN and no
// one else may reap children with waitpid(-1) (the shim's status is lost).
// The environment is read from `environ` at spawn time: do not setenv()
// concurrently.
//
// Where the code lives: the worker's side (RunSubprocess, its Supervisor)
// in subprocess.cc; the shim's and the job's own pre-exec code in shim.cc
// (env/shim.h); the stop request in stop_signal.h.
//
// Thread safety: RunSubprocess may run on many threads at once; every fd it
// creates is close-on-exec and the shim closes all fds it does not need.
// StopSignal is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/stop_signal.h"
#include "warden/job.h"

namespace warden {

struct SubprocessSpec {
  std::string command;  // run as /bin/sh -c COMMAND
  // The job's stdin, a file (memfd) that holds it: the job reads it without
  // its worker's help.
  std::string stdin_data;
  // Added to (overriding) the worker's environment. WARDEN_CONTROL_FD=3 is
  // always set.
  std::vector<std::pair<std::string, std::string>> env;
  Millis timeout{30 * 60 * 1000};
  Millis kill_grace{5000};   // after SIGTERM to the group, wait before SIGKILL
  size_t tail_bytes = 4096;  // keep the last N bytes of stdout and of stderr
  // The job's process checks this CLOCK_BOOTTIME instant (ms, as
  // SystemClock::MonotonicMs reads it) immediately before exec, and runs
  // nothing if it has passed (missed_start_deadline): the worker that
  // spawned it may be frozen by then, its lease gone to another worker.
  std::optional<int64_t> start_by_mono_ms;
  // The warden-shim program (FindShimProgram), started for the job with
  // posix_spawn. Empty, or not startable: the worker forks itself to run
  // the same shim code, which costs a copy of its page tables per job.
  std::string shim_path;
};

// warden-shim beside the running program, or in its ../libexec/warden, or
// in the libexec directory warden was built to install to; empty if none
// is an executable file.
std::string FindShimProgram();

struct SubprocessResult {
  bool started = false;  // false: could not spawn; see spawn_error
  // Not run: its start deadline had passed when its process was about to
  // exec (started is false).
  bool missed_start_deadline = false;
  // Why the job could not be started, or why supervision failed (the shim
  // died unexpectedly; the job was then SIGKILLed).
  std::string spawn_error;
  std::optional<int> exit_code;  // exited normally
  std::optional<int> signal;     // killed by this signal
  bool timed_out = false;        // we stopped it because of the timeout
  StopReason stopped = StopReason::kNone;  // we stopped it: StopSignal
  std::string stdout_tail, stderr_tail;
  Millis elapsed{0};  // steady clock, spawn to reaped
};

// Longest control line delivered; longer lines are dropped with a note
// appended to stderr_tail.
inline constexpr size_t kMaxControlLine = 1 << 20;

// Blocks the calling thread until the job is over. on_control_line (may be
// empty; must not throw) is called on the calling thread with each complete
// ('\n'-terminated, newline stripped) line the job writes to fd 3, in order;
// an unterminated last line is not delivered. On timeout or stop the group
// gets SIGTERM (+SIGCONT), then SIGKILL after kill_grace (at once when the
// stop reason is kFence). If `stop` is
// already requested, nothing is spawned (started=false, stopped set).
SubprocessResult RunSubprocess(
    const SubprocessSpec& spec, StopSignal& stop,
    const std::function<void(const std::string&)>& on_control_line);

}  // namespace warden
