// warden-shim: the shim (env/shim.h) as a program of its own. A worker
// starts it with posix_spawn for each command job instead of forking
// itself: a fork copies the worker's page tables (every thread's stack,
// every library), which cost most of a short command job's time, and
// this program is small enough that its own fork of the job is cheap.
// What it does is shim::Run, the same code a forked shim runs.
//
//   warden-shim v1 SOCK STDIN STDOUT STDERR CONTROL START_BY_MS /bin/sh -c COMMAND
//
// `v1` names the protocol (these arguments, shim.h's messages): a worker
// still running after an upgrade replaced this file must not be
// misunderstood by a newer shim, which refuses a version it does not speak.
// The five fds are open in it (the worker's posix_spawn keeps them), every
// signal is blocked, and its environment is the job's. Run by hand it says
// what it is and exits 2.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "env/shim.h"

extern char** environ;

namespace {

bool ParseLong(const char* text, long lo, long hi, long* out) {
  char* end = nullptr;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

[[noreturn]] void Usage() {
  static const char kText[] =
      "warden-shim: a worker starts this program to supervise one command job "
      "(docs/design.md, \"Running a job\"); it is not run by hand\n";
  (void)!write(2, kText, sizeof kText - 1);
  _exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int kFds = 5;
  if (argc < 3 + kFds + 1 || strcmp(argv[1], warden::shim::kProgramProtocol) != 0) Usage();
  long fd[kFds];
  for (int i = 0; i < kFds; ++i) {
    if (!ParseLong(argv[2 + i], 0, INT_MAX, &fd[i])) Usage();
  }
  long start_by = 0;
  if (!ParseLong(argv[2 + kFds], -1, LONG_MAX, &start_by)) Usage();
  const long open_max = sysconf(_SC_OPEN_MAX);
  const warden::shim::Args args{
      static_cast<int>(fd[0]),
      static_cast<int>(fd[1]),
      static_cast<int>(fd[2]),
      static_cast<int>(fd[3]),
      static_cast<int>(fd[4]),
      argv + 3 + kFds,
      environ,
      static_cast<int>(open_max < 1024    ? 1024
                       : open_max > 65536 ? 65536
                                          : open_max),
      start_by,
  };
  warden::shim::Run(args);
}
