// The shim: the small process between a worker and one subprocess job
// (env/subprocess.h draws the tree), and the messages it exchanges with
// the worker's Supervisor (env/subprocess.cc).
//
// Why a process of its own: it outlives a killed worker. It is the
// warden-shim program (env/shim/warden_shim.cc), or a fork of the worker
// that never execs, in a process group of its own, ignoring
// terminal and termination signals; it forks the job, reports the job's pid
// (= pgid), forwards the worker's signals to the job's group, and when the
// job's main process exits kills what is left of the group before reaping
// it. EOF on its socket means the worker died: it SIGKILLs the group.
//
// The job's own process, between the shim's fork and execve, waits for the
// shim's go byte (sent once the worker knows the pgid), then checks, right
// before execve, its start deadline and whether the worker is still there
// (PeerGone): the start gate. The job's stdin is a file (the Supervisor's
// memfd), so once exec'd it needs nothing from the worker to begin.
//
// Everything the worker hands over (Args) is prepared before the fork, and
// Run, like all code here, makes only async-signal-safe calls: the worker
// that forked it is multithreaded.
#pragma once

#include <cstdint>

namespace warden::shim {

// The start gate's last check, in the job's own process just before exec:
// whether `now_ms` (CLOCK_BOOTTIME) has reached the deadline its worker
// handed over (-1: none), past which its lease may be another worker's.
// (The runtime simulation's job processes ask it too.)
inline bool StartDeadlinePassed(int64_t start_by_ms, int64_t now_ms) {
  return start_by_ms >= 0 && now_ms >= start_by_ms;
}

// warden-shim's first argument (env/shim/warden_shim.cc): the version of
// its arguments and of the messages below. Change it with either.
inline constexpr char kProgramProtocol[] = "v1";

// Messages on the worker <-> shim SOCK_SEQPACKET socket.
enum MsgType : int32_t {
  kMsgPid = 1,      // shim -> worker: a = job pid (= pgid)
  kMsgStatus,       // shim -> worker: a = raw wait status; the job is reaped
  kMsgSpawnFailed,  // shim -> worker: a = SpawnStage, b = errno
  kMsgSignal,       // worker -> shim: a = signal for the job's group
};
struct Msg {
  int32_t type;
  int32_t a;
  int32_t b;
};

enum SpawnStage : int32_t {
  kStageShimPipe = 1,
  kStageFork,
  kStageSetpgid,
  kStageFds,
  kStageExec,
  kStageStartDeadline,  // not an error: the start deadline had passed
  kStageWorkerGone,     // nor this: the worker died before the job's exec
};

// What failed, for a kMsgSpawnFailed's `a`: "exec /bin/sh", ...
const char* StageName(int32_t stage);

// Everything the shim and the job need, prepared before fork so that the
// children only make async-signal-safe calls.
struct Args {
  int sock;  // the shim's end of the socketpair
  int stdin_r, stdout_w, stderr_w, control_w;  // the job's ends
  char* const* argv;
  char* const* envp;
  int max_fd;  // for closing fds without close_range
  int64_t start_by_ms;  // CLOCK_BOOTTIME; -1: none
};

// The shim's life, called in the worker's child right after fork (with
// every signal blocked, as the worker forked it). Never returns.
[[noreturn]] void Run(const Args& a);

}  // namespace warden::shim
