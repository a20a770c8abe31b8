#include "runtime/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>

extern char** environ;

namespace warden {

StopSignal::~StopSignal() {
  if (fd_ >= 0) close(fd_);
}

namespace {
void Signal(int fd) {
  uint64_t one = 1;
  (void)!write(fd, &one, sizeof one);
}
}  // namespace

int StopSignal::fd() const {
  std::call_once(made_, [this] {
    fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    // A request that came before the fd existed did not signal it.
    if (fd_ >= 0 && requested()) Signal(fd_);
  });
  return fd_;
}

void StopSignal::Request(StopReason why) {
  if (why == StopReason::kNone) return;
  StopReason expected = StopReason::kNone;
  reason_.compare_exchange_strong(expected, why);
  // After the reason is set: either fd() sees it, or its fd is seen here.
  if (const int fd = fd_.load(); fd >= 0) Signal(fd);
}

namespace {

using Clock = std::chrono::steady_clock;

// Keeps steady_clock arithmetic far from overflow.
constexpr Millis kMaxWait{int64_t{10} * 365 * 24 * 3600 * 1000};
constexpr size_t kReadChunk = 64 * 1024;
// After the job is over, read at most this much more of each stream (a
// process that escaped the group could keep writing forever).
constexpr size_t kDrainBudget = 1 << 20;

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

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void release() { fd_ = -1; }
  void reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

std::string ErrnoText(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}

// Everything the shim and the job need, prepared before fork so that the
// children only make async-signal-safe calls.
struct ShimArgs {
  int sock;  // the shim's end of the socketpair
  int stdin_r, stdout_w, stderr_w, control_w;  // the job's ends
  char* const* argv;
  char* const* envp;
  int max_fd;  // for closing fds without close_range
  int64_t start_by_ms;  // CLOCK_BOOTTIME; -1: none
};

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
  if (start_by_ms < 0) return false;
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1'000'000 >= start_by_ms;
}

[[noreturn]] void ReportAndExit(int fd, int32_t stage) {
  int32_t report[2] = {stage, errno};
  (void)!write(fd, report, sizeof report);
  _exit(127);
}

[[noreturn]] void RunJob(const ShimArgs& a, int err_w, int go_r, pid_t shim) {
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
  // whose database session a sweeper takes for dead: README, the
  // PostgreSQL section, `session_cut`.)
  if (PastStartDeadline(a.start_by_ms)) ReportAndExit(4, kStageStartDeadline);
  if (PeerGone(5)) ReportAndExit(4, kStageWorkerGone);
  execve("/bin/sh", a.argv, a.envp);
  ReportAndExit(4, kStageExec);
}

[[noreturn]] void RunShim(const ShimArgs& a) {
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

// ---- Worker side. ----

void AppendTail(std::string& tail, const char* data, size_t n, size_t cap) {
  if (cap == 0) return;
  if (n >= cap) {
    tail.assign(data + (n - cap), cap);
    return;
  }
  tail.append(data, n);
  if (tail.size() > 2 * cap) tail.erase(0, tail.size() - cap);
}

void TrimTail(std::string& tail, size_t cap) {
  if (tail.size() > cap) tail.erase(0, tail.size() - cap);
}

bool SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// The worker's environment with `extra` (then WARDEN_CONTROL_FD) overriding.
std::vector<std::string> BuildEnv(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    env.emplace_back(*e);
  }
  auto set = [&env](const std::string& key, const std::string& value) {
    std::erase_if(env, [&key](const std::string& kv) {
      return kv.size() > key.size() && kv[key.size()] == '=' &&
             kv.compare(0, key.size(), key) == 0;
    });
    env.push_back(key + "=" + value);
  };
  for (const auto& [key, value] : extra) set(key, value);
  set("WARDEN_CONTROL_FD", "3");
  return env;
}

std::string ValidateSpec(const SubprocessSpec& spec) {
  if (spec.command.find('\0') != std::string::npos) {
    return "command contains a NUL byte";
  }
  for (const auto& [key, value] : spec.env) {
    if (key.empty() ||
        key.find_first_of(std::string("=\0", 2)) != std::string::npos) {
      return "invalid environment variable name '" + key + "'";
    }
    if (value.find('\0') != std::string::npos) {
      return "environment variable " + key + " contains a NUL byte";
    }
  }
  return "";
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return "signal " + std::to_string(WTERMSIG(status));
  }
  return "status " + std::to_string(status);
}

// The job's stdin: the payload on a memfd, read from its start. Not a pipe
// the worker feeds: once exec'd, the job needs nothing from its worker to
// begin, so a worker frozen after the spawn cannot hold the job's start
// back until past its lease.
std::string PayloadFile(const std::string& data, Fd& out) {
  Fd fd(memfd_create("warden-job-stdin", MFD_CLOEXEC));
  if (!fd.valid()) return ErrnoText("memfd_create", errno);
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = write(fd.get(), data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoText("writing the job's stdin", errno);
    off += static_cast<size_t>(n);
  }
  if (lseek(fd.get(), 0, SEEK_SET) != 0) return ErrnoText("lseek", errno);
  out.reset(fd.get());
  fd.release();
  return "";
}

// The worker's half of one job: owns its end of every pipe and the socket.
class Supervisor {
 public:
  Supervisor(const SubprocessSpec& spec, StopSignal& stop,
             const std::function<void(const std::string&)>& on_control_line,
             SubprocessResult& result)
      : spec_(spec),
        stop_(stop),
        on_control_line_(on_control_line),
        result_(result),
        buf_(kReadChunk) {}

  // Spawns the shim; false (with result.spawn_error set) if it could not.
  bool Spawn();
  // Supervises until the job is over and the shim reaped.
  void Run(Clock::time_point start);

 private:
  void SignalGroup(int sig);
  // One read; at EOF or error the fd is closed.
  void ReadStream(Fd& fd, int which);
  void OnData(int which, const char* data, size_t n);
  void OnControlData(const char* data, size_t n);
  void ReadSocket();
  void Drain(Fd& fd, int which);
  void Finish();

  const SubprocessSpec& spec_;
  StopSignal& stop_;
  const std::function<void(const std::string&)>& on_control_line_;
  SubprocessResult& result_;
  std::vector<char> buf_;

  Fd stdout_r_, stderr_r_, control_r_, sock_;
  pid_t shim_pid_ = -1;
  pid_t job_pid_ = -1;
  std::optional<int> status_;
  bool spawn_failed_ = false;
  bool shim_gone_ = false;  // socket EOF
  std::string control_line_;
  bool control_dropping_ = false;
};

bool Supervisor::Spawn() {
  std::vector<std::string> env = BuildEnv(spec_.env);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (std::string& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  std::string sh = "/bin/sh", dash_c = "-c", command = spec_.command;
  char* argv[] = {sh.data(), dash_c.data(), command.data(), nullptr};

  int out[2], err[2], ctl[2], sv[2];
  Fd job_in, job_out, job_err, job_ctl, shim_sock;
  auto pipe_pair = [](int p[2], Fd& worker_end, Fd& job_end, bool write_end) {
    if (pipe2(p, O_CLOEXEC) != 0) return false;
    worker_end.reset(write_end ? p[1] : p[0]);
    job_end.reset(write_end ? p[0] : p[1]);
    return SetNonBlocking(worker_end.get());
  };
  if (std::string error = PayloadFile(spec_.stdin_data, job_in); !error.empty()) {
    result_.spawn_error = error;
    return false;
  }
  if (!pipe_pair(out, stdout_r_, job_out, false) ||
      !pipe_pair(err, stderr_r_, job_err, false) ||
      !pipe_pair(ctl, control_r_, job_ctl, false)) {
    result_.spawn_error = ErrnoText("pipe", errno);
    return false;
  }
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    result_.spawn_error = ErrnoText("socketpair", errno);
    return false;
  }
  sock_.reset(sv[0]);
  shim_sock.reset(sv[1]);
  if (!SetNonBlocking(sock_.get())) {
    result_.spawn_error = ErrnoText("fcntl", errno);
    return false;
  }
  long open_max = sysconf(_SC_OPEN_MAX);
  ShimArgs args{
      shim_sock.get(), job_in.get(),
      job_out.get(),   job_err.get(),
      job_ctl.get(),   argv,
      envp.data(),     static_cast<int>(std::clamp(open_max, 1024L, 65536L)),
      spec_.start_by_mono_ms.value_or(-1)};

  // Block all signals across fork: no worker handler may run in the shim,
  // which keeps them blocked; the job unblocks after resetting handlers.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = fork();
  if (pid == 0) RunShim(args);
  int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) {
    result_.spawn_error = ErrnoText("fork", fork_errno);
    return false;
  }
  shim_pid_ = pid;
  return true;  // the job's ends and shim_sock close here, in the worker
}

void Supervisor::SignalGroup(int sig) {
  Msg m{kMsgSignal, sig, 0};
  while (send(sock_.get(), &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
         errno == EINTR) {
  }
}

void Supervisor::ReadStream(Fd& fd, int which) {
  ssize_t n = read(fd.get(), buf_.data(), buf_.size());
  if (n > 0) {
    OnData(which, buf_.data(), static_cast<size_t>(n));
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    fd.reset();
  }
}

void Supervisor::OnData(int which, const char* data, size_t n) {
  if (which == 1) AppendTail(result_.stdout_tail, data, n, spec_.tail_bytes);
  if (which == 2) AppendTail(result_.stderr_tail, data, n, spec_.tail_bytes);
  if (which == 3) OnControlData(data, n);
}

void Supervisor::OnControlData(const char* data, size_t n) {
  while (n > 0) {
    const char* nl = static_cast<const char*>(memchr(data, '\n', n));
    size_t len = nl != nullptr ? static_cast<size_t>(nl - data) : n;
    if (!control_dropping_) {
      if (control_line_.size() + len > kMaxControlLine) {
        control_dropping_ = true;
        control_line_.clear();
        control_line_.shrink_to_fit();
        static constexpr char kNote[] =
            "\n[warden: dropped a control line longer than 1 MiB]\n";
        AppendTail(result_.stderr_tail, kNote, sizeof kNote - 1,
                   spec_.tail_bytes);
      } else {
        control_line_.append(data, len);
      }
    }
    if (nl == nullptr) return;
    if (!control_dropping_ && on_control_line_) on_control_line_(control_line_);
    control_line_.clear();
    control_dropping_ = false;
    data = nl + 1;
    n -= len + 1;
  }
}

void Supervisor::ReadSocket() {
  for (;;) {
    Msg m;
    ssize_t n = recv(sock_.get(), &m, sizeof m, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // A shim that exits with our messages unread leaves ECONNRESET, which
    // is reported once, ahead of what it sent: read on.
    if (n < 0 && errno == ECONNRESET) continue;
    if (n <= 0) {
      shim_gone_ = true;
      return;
    }
    if (n != sizeof m) continue;
    if (m.type == kMsgPid) {
      job_pid_ = m.a;
      result_.started = true;
    } else if (m.type == kMsgStatus) {
      status_ = m.a;
    } else if (m.type == kMsgSpawnFailed) {
      spawn_failed_ = true;
      if (m.a == kStageStartDeadline) {
        result_.missed_start_deadline = true;
        result_.spawn_error = "its start deadline had passed; not run";
      } else if (m.a == kStageWorkerGone) {
        result_.spawn_error = "its worker died before it could start; not run";
      } else {
        result_.spawn_error = ErrnoText(StageName(m.a), m.b);
      }
    }
  }
}

void Supervisor::Run(Clock::time_point start) {
  const Clock::time_point deadline = start + std::min(spec_.timeout, kMaxWait);
  const Millis grace = std::min(spec_.kill_grace, kMaxWait);
  bool stopping = false;
  bool killed = false;
  Clock::time_point kill_at;
  auto ms_until = [](Clock::time_point t, Clock::time_point now) {
    auto ms = std::chrono::ceil<Millis>(t - now).count();
    return static_cast<int>(std::clamp<int64_t>(ms, 0, INT_MAX));
  };

  while (!status_ && !shim_gone_ && !spawn_failed_) {
    Clock::time_point now = Clock::now();
    if (!stopping) {
      StopReason why = stop_.reason();
      if (why != StopReason::kNone) {
        result_.stopped = why;
      } else if (now >= deadline) {
        result_.timed_out = true;
      }
      if (result_.stopped != StopReason::kNone || result_.timed_out) {
        stopping = true;
        SignalGroup(SIGTERM);
        SignalGroup(SIGCONT);  // a stopped job must run to handle TERM
        // A fenced run is one whose lease may already pass to another
        // worker: no grace, or it could overlap the next attempt.
        kill_at = result_.stopped == StopReason::kFence ? now : now + grace;
      }
    }
    if (stopping && !killed && now >= kill_at) {
      SignalGroup(SIGKILL);
      killed = true;
    }

    int timeout_ms = -1;
    if (!stopping) {
      timeout_ms = ms_until(deadline, now);
      if (stop_.fd() < 0) timeout_ms = std::min(timeout_ms, 50);
    } else if (!killed) {
      timeout_ms = ms_until(kill_at, now);
    }

    enum { kSock, kStop, kOut, kErr, kCtl, kCount };
    struct pollfd fds[kCount];
    int fd_of[kCount] = {sock_.get(), stopping ? -1 : stop_.fd(), stdout_r_.get(),
                         stderr_r_.get(), control_r_.get()};
    // poll ignores negative fds.
    for (int i = 0; i < kCount; ++i) fds[i] = {fd_of[i], POLLIN, 0};
    int ready = poll(fds, kCount, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == ENOMEM) continue;
      result_.spawn_error = ErrnoText("poll", errno);
      SignalGroup(SIGKILL);
      break;
    }
    const short kAny = POLLIN | POLLHUP | POLLERR | POLLNVAL;
    if (fds[kOut].revents & kAny) ReadStream(stdout_r_, 1);
    if (fds[kErr].revents & kAny) ReadStream(stderr_r_, 2);
    if (fds[kCtl].revents & kAny) ReadStream(control_r_, 3);
    if (fds[kSock].revents & kAny) ReadSocket();
  }
  Finish();
}

void Supervisor::Drain(Fd& fd, int which) {
  size_t total = 0;
  while (fd.valid() && total < kDrainBudget) {
    ssize_t n = read(fd.get(), buf_.data(), buf_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF, or EAGAIN: nothing written is left unread
    OnData(which, buf_.data(), static_cast<size_t>(n));
    total += static_cast<size_t>(n);
  }
  fd.reset();
}

void Supervisor::Finish() {
  if (shim_gone_ && !status_ && !spawn_failed_ && job_pid_ > 0) {
    // The shim died without reporting: the group is unsupervised. Kill it
    // at once, while the pid is least likely to have been reused.
    kill(-job_pid_, SIGKILL);
  }
  // Once the shim has reported, every writer in the group is dead, so all
  // the output that exists is already in the pipes.
  Drain(stdout_r_, 1);
  Drain(stderr_r_, 2);
  Drain(control_r_, 3);

  int shim_status = 0;
  pid_t reaped;
  while ((reaped = waitpid(shim_pid_, &shim_status, 0)) < 0 && errno == EINTR) {
  }
  const int wait_errno = errno;
  if (!status_ && !spawn_failed_) ReadSocket();  // a late report

  if (status_) {
    if (WIFEXITED(*status_)) result_.exit_code = WEXITSTATUS(*status_);
    if (WIFSIGNALED(*status_)) result_.signal = WTERMSIG(*status_);
  } else if (!spawn_failed_ && result_.spawn_error.empty()) {
    std::string how = reaped == shim_pid_ ? DescribeWaitStatus(shim_status)
                                          : ErrnoText("waitpid", wait_errno);
    if (job_pid_ > 0) {
      result_.signal = SIGKILL;
      result_.spawn_error =
          "supervisor shim died unexpectedly (" + how + "); job killed";
    } else {
      result_.spawn_error =
          "supervisor shim died before starting the job (" + how + ")";
    }
  }
  if (spawn_failed_) result_.started = false;
  TrimTail(result_.stdout_tail, spec_.tail_bytes);
  TrimTail(result_.stderr_tail, spec_.tail_bytes);
}

}  // namespace

SubprocessResult RunSubprocess(
    const SubprocessSpec& spec, StopSignal& stop,
    const std::function<void(const std::string&)>& on_control_line) {
  SubprocessResult result;
  const Clock::time_point start = Clock::now();
  if (std::string invalid = ValidateSpec(spec); !invalid.empty()) {
    result.spawn_error = invalid;
    return result;
  }
  if (stop.requested()) {
    result.stopped = stop.reason();
    result.spawn_error = "stop requested before the job started";
    return result;
  }
  {
    Supervisor supervisor(spec, stop, on_control_line, result);
    if (supervisor.Spawn()) supervisor.Run(start);
  }
  result.elapsed = std::chrono::duration_cast<Millis>(Clock::now() - start);
  return result;
}

}  // namespace warden
