// The shim's code and the job's own, from fork to execve or _exit
// (env/shim.h says what the shim is for). Both run in children of a
// multithreaded worker: async-signal-safe calls only.
#include "env/shim.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace warden::shim {

const char* StageName(int32_t stage) {
  switch (stage) {
    case kStageShimPipe:
      return "shim pipe2";
    case kStageFork:
      return "shim fork";
    case kStageSetpgid:
      return "setpgid";
    case kStageFds:
      return "setting up job fds";
    case kStageExec:
      return "exec /bin/sh";
    case kStageStartDeadline:
      return "start deadline";
    case kStageWorkerGone:
      return "worker gone";
  }
  return "spawn";
}

namespace {

// ---- Async-signal-safe code: runs between fork and exec/_exit. ----

void CloseRange(int lo, int hi, int max_fd) {  // hi < 0: to the end
  if (close_range(static_cast<unsigned>(lo),
                  hi < 0 ? ~0U : static_cast<unsigned>(hi), 0) == 0) {
    return;
  }
  for (int fd = lo; fd <= (hi < 0 ? max_fd : hi); ++fd) close(fd);
}

// The shim is a fork that never execs, so it holds copies of every fd the
// worker had open (other jobs' pipes, other shims' sockets); drop them.
void CloseAllExcept(int* keep, int n, int max_fd) {
  for (int i = 1; i < n; ++i) {  // insertion sort; n is tiny
    for (int j = i; j > 0 && keep[j - 1] > keep[j]; --j) {
      int t = keep[j];
      keep[j] = keep[j - 1];
      keep[j - 1] = t;
    }
  }
  int next = 0;
  for (int i = 0; i < n; ++i) {
    if (keep[i] > next) CloseRange(next, keep[i] - 1, max_fd);
    if (keep[i] >= next) next = keep[i] + 1;
  }
  CloseRange(next, -1, max_fd);
}

// Sets every handler to SIG_DFL (no worker handler may run in a child),
// then ignores `ignored`. The signal mask is left alone.
void ResetSignalHandlers(const int* ignored, int n_ignored) {
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &sa, nullptr);
  }
  sa.sa_handler = SIG_IGN;
  for (int i = 0; i < n_ignored; ++i) sigaction(ignored[i], &sa, nullptr);
}

void SendMsg(int sock, int32_t type, int32_t a, int32_t b) {
  Msg m{type, a, b};
  while (send(sock, &m, sizeof m, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

int WaitBlocking(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Reads the job's pre-exec failure report; false at EOF (exec succeeded).
bool ReadExecReport(int fd, int32_t report[2]) {
  size_t got = 0;
  while (got < 2 * sizeof(int32_t)) {
    ssize_t n = read(fd, reinterpret_cast<char*>(report) + got,
                     2 * sizeof(int32_t) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  return got == 2 * sizeof(int32_t);
}

// Whether the worker's end of the socket is closed (it died), whatever
// messages it left unread.
bool PeerGone(int sock) {
  pollfd p{sock, POLLRDHUP, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

bool PastStartDeadline(int64_t start_by_ms) {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return StartDeadlinePassed(start_by_ms, int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1'000'000);
}

[[noreturn]] void ReportAndExit(int fd, int32_t stage) {
  int32_t report[2] = {stage, errno};
  (void)!write(fd, report, sizeof report);
  _exit(127);
}

// The job's own process, from the shim's fork to its execve.
[[noreturn]] void RunJob(const Args& a, int err_w, int go_r, pid_t shim) {
  if (setpgid(0, 0) != 0) ReportAndExit(err_w, kStageSetpgid);
  // Backstop for a shim killed by SIGKILL: the shell dies with it (its
  // descendants do not; the shim's group kill is the real mechanism).
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != shim) _exit(127);
  // Run nothing until the worker knows our pgid: EOF without the go byte
  // means the shim died first.
  char go = 0;
  while (read(go_r, &go, 1) < 0 && errno == EINTR) {
  }
  if (go != 'g') _exit(127);
  close(go_r);
  // Signals were blocked since before the worker forked, so one sent to the
  // group already (a stop) is pending, not lost; it strikes here.
  ResetSignalHandlers(nullptr, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Move every source above the targets first, so dup2 cannot clobber a
  // source that happens to be numbered 0..5. Fd 4 (the failure report) and
  // fd 5 (the shim's socket to the worker) close on exec.
  const int src[6] = {a.stdin_r, a.stdout_w, a.stderr_w, a.control_w, err_w, a.sock};
  int tmp[6];
  for (int i = 0; i < 6; ++i) {
    tmp[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 6);
    if (tmp[i] < 0) ReportAndExit(err_w, kStageFds);
  }
  for (int i = 0; i < 4; ++i) {
    if (dup2(tmp[i], i) < 0) ReportAndExit(tmp[4], kStageFds);
  }
  if (dup3(tmp[4], 4, O_CLOEXEC) < 0) ReportAndExit(tmp[4], kStageFds);
  if (dup3(tmp[5], 5, O_CLOEXEC) < 0) ReportAndExit(4, kStageFds);
  CloseRange(6, -1, a.max_fd);
  // The last moment before the job's code runs. The worker (which may be
  // frozen right now) could prove its lease only until start_by_ms; and it
  // must still be alive: its files, this socket's peer included, close
  // before its death can be proven, so a job that execs after this check
  // execs before anyone can have recovered it. (Not so for a live worker
  // whose database session a sweeper takes for dead: docs/postgres.md,
  // the known issue `session_cut`.)
  if (PastStartDeadline(a.start_by_ms)) ReportAndExit(4, kStageStartDeadline);
  if (PeerGone(5)) ReportAndExit(4, kStageWorkerGone);
  execve("/bin/sh", a.argv, a.envp);
  ReportAndExit(4, kStageExec);
}

}  // namespace

[[noreturn]] void Run(const Args& a) {
  // Signals meant for the worker (terminal ^C, a group SIGTERM) must not
  // kill the shim before it has cleaned up: they are ignored, and all
  // signals stay blocked (as the worker forked us) for the shim's life.
  static const int kIgnored[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGPIPE,
                                 SIGTERM, SIGTSTP, SIGTTIN, SIGTTOU};
  ResetSignalHandlers(kIgnored, sizeof kIgnored / sizeof kIgnored[0]);
  // Own group: `kill -9 -<worker pgid>` then spares the shim, which sees
  // EOF and kills the job.
  setpgid(0, 0);
  int keep[] = {0,         1,          2,          a.sock,
                a.stdin_r, a.stdout_w, a.stderr_w, a.control_w};
  CloseAllExcept(keep, sizeof keep / sizeof keep[0], a.max_fd);

  int errp[2];
  int gop[2];
  if (pipe2(errp, O_CLOEXEC) != 0 || pipe2(gop, O_CLOEXEC) != 0) {
    SendMsg(a.sock, kMsgSpawnFailed, kStageShimPipe, errno);
    _exit(0);
  }
  const pid_t self = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    close(errp[0]);
    close(gop[1]);
    RunJob(a, errp[1], gop[0], self);
  }
  const int fork_errno = errno;
  close(errp[1]);
  close(gop[0]);
  close(a.stdin_r);
  close(a.stdout_w);
  close(a.stderr_w);
  close(a.control_w);
  if (pid < 0) {
    SendMsg(a.sock, kMsgSpawnFailed, kStageFork, fork_errno);
    _exit(0);
  }
  // Also done by the job; doing it here too means the group exists before
  // the worker hears of it. The job waits for the go byte, so the worker
  // knows the pgid before any job code runs and can kill the group even if
  // the shim dies later.
  setpgid(pid, pid);
  SendMsg(a.sock, kMsgPid, pid, 0);
  (void)!write(gop[1], "g", 1);
  close(gop[1]);
  // Without pidfd (kernel < 5.3) fall back to checking every 50 ms.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  int exec_pipe = errp[0];  // open until the job has exec'd (EOF)
  for (;;) {
    struct pollfd fds[3] = {
        {a.sock, POLLIN, 0}, {exec_pipe, POLLIN, 0}, {pidfd, POLLIN, 0}};
    int ready = poll(fds, 3, pidfd >= 0 ? -1 : 50);  // skips negative fds
    if (ready > 0 && fds[0].revents != 0) {
      for (;;) {
        Msg m;
        ssize_t n = recv(a.sock, &m, sizeof m, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (n <= 0) {  // EOF or error: the worker is gone
          kill(-pid, SIGKILL);
          WaitBlocking(pid);
          _exit(0);
        }
        if (n == sizeof m && m.type == kMsgSignal) kill(-pid, m.a);
      }
    }
    if (exec_pipe >= 0 && ready > 0 && fds[1].revents != 0) {
      int32_t report[2];
      if (ReadExecReport(exec_pipe, report)) {
        WaitBlocking(pid);
        SendMsg(a.sock, kMsgSpawnFailed, report[0], report[1]);
        _exit(0);
      }
      close(exec_pipe);
      exec_pipe = -1;
    }
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      // The job wrote any failure report before exiting, so this read
      // cannot block.
      int32_t report[2];
      if (exec_pipe >= 0 && ReadExecReport(exec_pipe, report)) {
        WaitBlocking(pid);
        SendMsg(a.sock, kMsgSpawnFailed, report[0], report[1]);
        _exit(0);
      }
      // The leader is a zombie, so its pid (= pgid) cannot be reused yet:
      // kill what it left behind in its group, then reap it.
      kill(-pid, SIGKILL);
      int status = WaitBlocking(pid);
      SendMsg(a.sock, kMsgStatus, status, 0);
      _exit(0);
    }
  }
}

}  // namespace warden::shim
