#include "child_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "env/process.h"

extern char** environ;

namespace wt {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

// ppid of every process in /proc (pid -> ppid).
std::map<pid_t, pid_t> ProcessParents() {
  std::map<pid_t, pid_t> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    const std::string stat = ReadFile("/proc/" + std::string(e->d_name) + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(paren + 1));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    out[static_cast<pid_t>(pid)] = static_cast<pid_t>(ppid);
  }
  closedir(d);
  return out;
}

// Every descendant of this process (thanks to the subreaper flag that is
// every process a test started, directly or not). Zombies included.
std::vector<pid_t> Descendants() {
  const auto parents = ProcessParents();
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, ppid] : parents) children.emplace(ppid, pid);
  std::vector<pid_t> out;
  std::vector<pid_t> todo = {getpid()};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    auto [lo, hi] = children.equal_range(p);
    for (auto it = lo; it != hi; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

bool IsZombie(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;  // gone
  return stat[paren + 2] == 'Z' || stat[paren + 2] == 'X';
}

}  // namespace

void KillAllDescendants() {
  for (int round = 0; round < 200; ++round) {
    bool any = false;
    for (pid_t pid : Descendants()) {
      if (IsZombie(pid)) continue;
      any = true;
      const pid_t pgid = getpgid(pid);
      if (pgid > 0 && pgid != getpgrp() && pgid == pid) kill(-pgid, SIGKILL);
      kill(pid, SIGKILL);
    }
    int status;
    while (waitpid(-1, &status, WNOHANG) > 0) {
    }
    if (!any) return;
    std::this_thread::sleep_for(Millis(10));
  }
  ADD_FAILURE() << "could not kill every process the test started";
}

bool AllThreadsStopped(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  bool all = true;
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ++n;
    const std::string stat = ReadFile(dir + "/" + e->d_name + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size() ||
        (stat[paren + 2] != 'T' && stat[paren + 2] != 't')) {
      all = false;
    }
  }
  closedir(d);
  return all && n > 0;
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
