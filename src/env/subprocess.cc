// The worker's side of a subprocess job: RunSubprocess and the Supervisor
// that spawns the shim (env/shim.h), hands the job its stdin as a file,
// then reads the job's output and control lines and stops it on a timeout
// or a StopSignal, until the shim reports the job reaped.
#include "env/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>

#include "env/shim.h"

extern char** environ;

namespace warden {

namespace {

using SteadyClock = std::chrono::steady_clock;

// Keeps steady_clock arithmetic far from overflow.
constexpr Millis kMaxWait{int64_t{10} * 365 * 24 * 3600 * 1000};
constexpr size_t kReadChunk = 64 * 1024;
// After the job is over, read at most this much more of each stream (a
// process that escaped the group could keep writing forever).
constexpr size_t kDrainBudget = 1 << 20;

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

// The worker's environment with `extra` (then WARDEN_CONTROL_FD) overriding,
// without the worker's channel to its service manager: a job that runs a
// notify-aware program must not tell systemd that the worker is ready or
// stopping, nor feed its watchdog.
std::vector<std::string> BuildEnv(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    env.emplace_back(*e);
  }
  auto erase = [&env](const std::string& key) {
    std::erase_if(env, [&key](const std::string& kv) {
      return kv.size() > key.size() && kv[key.size()] == '=' &&
             kv.compare(0, key.size(), key) == 0;
    });
  };
  for (const char* key : {"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"}) erase(key);
  auto set = [&env, &erase](const std::string& key, const std::string& value) {
    erase(key);
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

// Starts warden-shim (env/shim/warden_shim.cc) with the shim's fds kept
// at their numbers, every signal blocked and every handler default, as a
// fork of the worker would start shim::Run; its pid, or -1. posix_spawn
// runs the child in the worker's memory until the exec (no page tables
// copied), and only the five fds it names survive it: the worker's other
// fds are all close-on-exec.
pid_t SpawnShimProgram(const std::string& path, const shim::Args& a) {
  const int fds[] = {a.sock, a.stdin_r, a.stdout_w, a.stderr_w, a.control_w};
  std::vector<std::string> words = {path, shim::kProgramProtocol};
  for (int fd : fds) words.push_back(std::to_string(fd));
  words.push_back(std::to_string(a.start_by_ms));
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  for (char* const* w = a.argv; *w != nullptr; ++w) argv.push_back(*w);
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  if (posix_spawn_file_actions_init(&actions) != 0) return -1;
  if (posix_spawnattr_init(&attr) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return -1;
  }
  bool ready = true;
  // A dup2 onto itself clears the fd's close-on-exec flag in the child
  // (POSIX, glibc 2.29+).
  for (int fd : fds) ready = ready && posix_spawn_file_actions_adddup2(&actions, fd, fd) == 0;
  sigset_t all;
  sigfillset(&all);
  ready = ready &&
          posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) == 0 &&
          posix_spawnattr_setsigmask(&attr, &all) == 0 &&
          posix_spawnattr_setsigdefault(&attr, &all) == 0;
  pid_t pid = -1;
  if (ready && posix_spawn(&pid, path.c_str(), &actions, &attr, argv.data(), a.envp) != 0) {
    pid = -1;
  }
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
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
  void Run(SteadyClock::time_point start);

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
  shim::Args args{
      shim_sock.get(), job_in.get(),
      job_out.get(),   job_err.get(),
      job_ctl.get(),   argv,
      envp.data(),     static_cast<int>(std::clamp(open_max, 1024L, 65536L)),
      spec_.start_by_mono_ms.value_or(-1)};

  if (!spec_.shim_path.empty()) {
    if (pid_t pid = SpawnShimProgram(spec_.shim_path, args); pid > 0) {
      shim_pid_ = pid;
      return true;
    }
    // Not startable (removed, not executable): the fork below runs the
    // same shim code, only more slowly.
  }
  // Block all signals across fork: no worker handler may run in the shim,
  // which keeps them blocked; the job unblocks after resetting handlers.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = fork();
  if (pid == 0) shim::Run(args);
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
  shim::Msg m{shim::kMsgSignal, sig, 0};
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
    shim::Msg m;
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
    if (m.type == shim::kMsgPid) {
      job_pid_ = m.a;
      result_.started = true;
    } else if (m.type == shim::kMsgStatus) {
      status_ = m.a;
    } else if (m.type == shim::kMsgSpawnFailed) {
      spawn_failed_ = true;
      if (m.a == shim::kStageStartDeadline) {
        result_.missed_start_deadline = true;
        result_.spawn_error = "its start deadline had passed; not run";
      } else if (m.a == shim::kStageWorkerGone) {
        result_.spawn_error = "its worker died before it could start; not run";
      } else {
        result_.spawn_error = ErrnoText(shim::StageName(m.a), m.b);
      }
    }
  }
}

void Supervisor::Run(SteadyClock::time_point start) {
  const SteadyClock::time_point deadline = start + std::min(spec_.timeout, kMaxWait);
  const Millis grace = std::min(spec_.kill_grace, kMaxWait);
  bool stopping = false;
  bool killed = false;
  SteadyClock::time_point kill_at;
  auto ms_until = [](SteadyClock::time_point t, SteadyClock::time_point now) {
    auto ms = std::chrono::ceil<Millis>(t - now).count();
    return static_cast<int>(std::clamp<int64_t>(ms, 0, INT_MAX));
  };

  while (!status_ && !shim_gone_ && !spawn_failed_) {
    SteadyClock::time_point now = SteadyClock::now();
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
  const SteadyClock::time_point start = SteadyClock::now();
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
  result.elapsed = std::chrono::duration_cast<Millis>(SteadyClock::now() - start);
  return result;
}

std::string FindShimProgram() {
  std::vector<std::string> candidates;
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir.erase(dir.rfind('/') + 1);
    candidates.push_back(dir + "warden-shim");  // the build tree, or one directory
    candidates.push_back(dir + "../libexec/warden/warden-shim");  // a prefix
  }
#ifdef WARDEN_LIBEXEC_DIR
  candidates.push_back(WARDEN_LIBEXEC_DIR "/warden-shim");
#endif
  for (const std::string& path : candidates) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0) {
      return path;
    }
  }
  return "";
}

}  // namespace warden
