#include "child_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "env/process.h"
#include "proc.h"

extern char** environ;

namespace wt {

void KillAllDescendants() {
  const auto reap = [] {
    int status;
    while (waitpid(-1, &status, WNOHANG) > 0) {
    }
  };
  if (!proc::KillAllDescendants(reap, 200)) {
    ADD_FAILURE() << "could not kill every process the test started";
  }
}

bool WaitFor(const std::function<bool()>& cond, Millis timeout, Millis every) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (cond()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
}

int64_t MillisSince(SteadyTime t) {
  return std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - t).count();
}

ProcId Identify(pid_t pid) { return {pid, warden::ProcessStartTime(pid)}; }

bool Gone(const ProcId& p) { return !warden::ProcessAlive(p.pid, p.start); }

// ---- Child ----

std::unique_ptr<Child> Child::Spawn(const std::vector<std::string>& argv,
                                    const std::string& out_path, const std::string& err_path) {
  std::unique_ptr<Child> c(new Child());
  c->out_path_ = out_path;
  c->err_path_ = err_path;
  // Everything the child needs is prepared before fork: between fork and
  // exec it only makes async-signal-safe calls.
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (in < 0 || out < 0 || err < 0) throw std::runtime_error("cannot open child stdio files");
  const pid_t pid = fork();
  if (pid == 0) {
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
    close_range(3, ~0U, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(cargv[0], cargv.data(), environ);
    _exit(127);
  }
  close(in);
  close(out);
  close(err);
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  c->pid_ = pid;
  return c;
}

Child::~Child() {
  if (!reaped_) Kill();
}

bool Child::Signal(int sig) { return !reaped_ && kill(pid_, sig) == 0; }

void Child::Kill() {
  if (reaped_) return;
  kill(pid_, SIGKILL);
  while (!Exited()) std::this_thread::sleep_for(Millis(1));
}

bool Child::Exited() {
  if (reaped_) return true;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    status_ = status;
  } else if (r < 0 && errno == ECHILD) {
    reaped_ = true;  // reaped elsewhere (teardown); status unknown
    status_ = -1;
  }
  return reaped_;
}

bool Child::WaitExit(Millis timeout) {
  return WaitFor([this] { return Exited(); }, timeout, Millis(5));
}

int Child::ExitCode() const {
  if (!reaped_ || status_ == -1) return -1;
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return -1;
}

std::string Child::Stdout() const { return ReadFile(out_path_); }
std::string Child::Stderr() const { return ReadFile(err_path_); }

}  // namespace wt
