// libwarden_spawn_hold.so: a test-only LD_PRELOAD library that stretches,
// in a real `warden worker`, the moments between a slot's start check and
// the start of the job's code, and watches what starts.
//
// Active only in a process whose environment has WARDEN_TEST_SPAWN_HOLD=DIR
// (the worker, and the shims and jobs it forks, inherit it). Where it holds
// is WARDEN_TEST_SPAWN_HOLD_AT's choice:
//   `spawn` (the default): socketpair(AF_UNIX, SOCK_SEQPACKET, ...), the
//       supervisor's, made after Execute's checks and before the job's
//       process is forked, creates DIR/held, then waits until DIR/go
//       exists. A test freezes the worker meanwhile, as a SIGSTOP landing
//       in that window would.
//   `exec`: the same in the job's own process, at its dup3 onto fd 5 (the
//       worker's socket, kept for the check), just before its checks and
//       execve. A test kills the worker meanwhile.
//   execve("/bin/sh", {..., "-c", ...})  a job's command about to run:
//       appends "WARDEN_JOB_ID WARDEN_LEASE_TOKEN\n" (from the new
//       environment) to DIR/execs first.
//   kill(-PGID, SIG)  any signal to a process group (the shim's: a stop,
//       its cleanup after a job, its kill when the worker dies): waits 500
//       ms first. However slowly the worker reacts once it runs again, only
//       its start check can then keep a job from starting. Every job of a
//       held worker so ends 0.5 s later, and a stop (TERM, CONT, KILL) takes
//       1.5 s. Jobs inherit the library: one that itself ran `/bin/sh -c`
//       would add a line to DIR/execs (none of the tests' does).
// The execve and kill wrappers run in forked children: async-signal-safe
// calls only.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace {

using SocketpairFn = int (*)(int, int, int, int[2]);
using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using KillFn = int (*)(pid_t, int);
using DupFn = int (*)(int, int, int);

SocketpairFn real_socketpair;
ExecveFn real_execve;
KillFn real_kill;
DupFn real_dup3;
char dir[512];  // empty: inactive
bool hold_at_exec = false;

__attribute__((constructor)) void Init() {
  real_socketpair =
      reinterpret_cast<SocketpairFn>(dlsym(RTLD_NEXT, "socketpair"));
  real_execve = reinterpret_cast<ExecveFn>(dlsym(RTLD_NEXT, "execve"));
  real_kill = reinterpret_cast<KillFn>(dlsym(RTLD_NEXT, "kill"));
  real_dup3 = reinterpret_cast<DupFn>(dlsym(RTLD_NEXT, "dup3"));
  const char* d = getenv("WARDEN_TEST_SPAWN_HOLD");
  if (d != nullptr && strlen(d) + 16 < sizeof dir) strcpy(dir, d);
  const char* at = getenv("WARDEN_TEST_SPAWN_HOLD_AT");
  hold_at_exec = at != nullptr && strcmp(at, "exec") == 0;
}

void PathTo(const char* name, char* out) {
  strcpy(out, dir);
  strcat(out, "/");
  strcat(out, name);
}

void SleepMs(long ms) {
  timespec t{ms / 1000, (ms % 1000) * 1'000'000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

// The value of `name=` in `envp`, or "-".
const char* EnvValue(char* const envp[], const char* name) {
  const size_t n = strlen(name);
  for (int i = 0; envp != nullptr && envp[i] != nullptr; ++i) {
    if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
      return envp[i] + n + 1;
  }
  return "-";
}

// Writes its pid to DIR/held, then waits until DIR/go exists.
void Hold() {
  char held[600], go[600], pid[24];
  PathTo("held", held);
  PathTo("go", go);
  int n = 0;
  char digits[24];
  for (long p = getpid(); p > 0; p /= 10)
    digits[n++] = static_cast<char>('0' + p % 10);
  for (int i = 0; i < n; ++i) pid[i] = digits[n - 1 - i];
  const int fd = open(held, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    (void)!write(fd, pid, static_cast<size_t>(n));
    close(fd);
  }
  while (access(go, F_OK) != 0) SleepMs(5);
}

}  // namespace

extern "C" int socketpair(int domain, int type, int protocol, int sv[2]) {
  if (dir[0] != '\0' && !hold_at_exec && domain == AF_UNIX &&
      (type & 0xf) == SOCK_SEQPACKET) {
    Hold();
  }
  return real_socketpair(domain, type, protocol, sv);
}

extern "C" int dup3(int oldfd, int newfd, int flags) {
  if (dir[0] != '\0' && hold_at_exec && newfd == 5) Hold();
  return real_dup3(oldfd, newfd, flags);
}

extern "C" int execve(const char* path, char* const argv[],
                      char* const envp[]) {
  if (dir[0] != '\0' && strcmp(path, "/bin/sh") == 0 && argv[1] != nullptr &&
      strcmp(argv[1], "-c") == 0) {
    char execs[600], line[128];
    PathTo("execs", execs);
    line[0] = '\0';
    strncat(line, EnvValue(envp, "WARDEN_JOB_ID"), 40);
    strcat(line, " ");
    strncat(line, EnvValue(envp, "WARDEN_LEASE_TOKEN"), 40);
    strcat(line, "\n");
    const int fd = open(execs, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      (void)!write(fd, line, strlen(line));
      close(fd);
    }
  }
  return real_execve(path, argv, envp);
}

extern "C" int kill(pid_t pid, int sig) {
  if (dir[0] != '\0' && pid < -1 && sig != 0) SleepMs(500);
  return real_kill(pid, sig);
}
