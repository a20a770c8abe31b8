#include "child_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "env/process.h"
#include "poll_until.h"

extern char** environ;

namespace warden::testing {
namespace {

// Exit statuses of children reaped by ReapChildren before their Child or
// RunToExit asked (pid -> raw wait status).
std::map<pid_t, int>& Reaped() {
  static std::map<pid_t, int> reaped;
  return reaped;
}

// Whether `pid` has exited; its raw status in *status (-1: reaped
// elsewhere, unknown). Never blocks.
bool TryReap(pid_t pid, int* status) {
  auto it = Reaped().find(pid);
  if (it != Reaped().end()) {
    *status = it->second;
    Reaped().erase(it);
    return true;
  }
  const pid_t r = waitpid(pid, status, WNOHANG);
  if (r == pid) return true;
  if (r < 0 && errno == ECHILD) {
    *status = -1;
    return true;
  }
  return false;
}

int DecodeStatus(int status) {
  if (status == -1) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// environ plus `extra` (K=V; replaces an inherited K).
std::vector<std::string> EnvWith(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const std::string& x : extra) replaced = replaced || x.substr(0, x.find('=')) == key;
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (std::string& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// fork + exec with stdio redirected. Everything is prepared before fork:
// between fork and exec the child makes only async-signal-safe calls.
pid_t SpawnProcess(std::vector<std::string> argv, const std::string& out_path,
                   const std::string& err_path, const SpawnOptions& o) {
  std::vector<std::string> env = EnvWith(o.env);
  std::vector<char*> cargv = CStrings(argv);
  std::vector<char*> cenv = CStrings(env);
  const std::string ns_path = o.host ? "/run/netns/" + o.host->netns : "";
  const std::string hostname = o.host ? o.host->hostname : "";
  const int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  const int ns = o.host ? open(ns_path.c_str(), O_RDONLY | O_CLOEXEC) : -1;
  const pid_t parent = getpid();
  if (in < 0 || out < 0 || err < 0 || (o.host && ns < 0)) {
    const std::string why = std::strerror(errno);
    for (int fd : {in, out, err, ns}) {
      if (fd >= 0) close(fd);
    }
    throw std::runtime_error("cannot open stdio files or " + ns_path + ": " + why);
  }
  const pid_t pid = fork();
  if (pid == 0) {
    if (o.die_with_parent) {
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(120);
    }
    if (o.host) {
      // What `ip netns exec NAME` does for the network, plus a host name.
      if (setns(ns, CLONE_NEWNET) != 0) _exit(121);
      if (unshare(CLONE_NEWUTS) != 0) _exit(122);
      if (sethostname(hostname.data(), hostname.size()) != 0) _exit(123);
    }
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
    close_range(3, ~0U, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  for (int fd : {in, out, err, ns}) {
    if (fd >= 0) close(fd);
  }
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  return pid;
}

}  // namespace

// ---- Child ----

std::unique_ptr<Child> Child::Spawn(const std::vector<std::string>& argv,
                                    const std::string& out_path, const std::string& err_path,
                                    const SpawnOptions& options) {
  std::unique_ptr<Child> c(new Child());
  c->out_path_ = out_path;
  c->err_path_ = err_path;
  c->pid_ = SpawnProcess(argv, out_path, err_path, options);
  return c;
}

Child::~Child() { Kill(); }

bool Child::Signal(int sig) { return !Exited() && kill(pid_, sig) == 0; }

void Child::Kill() {
  if (Exited()) return;
  kill(pid_, SIGKILL);
  while (!Exited()) std::this_thread::sleep_for(Millis(1));  // dies at once: SIGKILL
}

bool Child::Exited() {
  if (!reaped_ && TryReap(pid_, &status_)) reaped_ = true;
  return reaped_;
}

bool Child::WaitExit(Millis timeout) {
  return PollUntil([this] { return Exited(); }, timeout, Millis(5));
}

int Child::ExitCode() const { return reaped_ ? DecodeStatus(status_) : -1; }

// ---- RunToExit ----

std::string CmdResult::Describe() const {
  return "exit " + std::to_string(exit_code) + (timed_out ? " (timed out)" : "") +
         "; stdout: " + out + "; stderr: " + err;
}

CmdResult RunToExit(const std::vector<std::string>& argv, const std::string& base, Millis timeout,
                    const std::vector<std::string>& env) {
  CmdResult r;
  std::unique_ptr<Child> child;
  try {
    child = Child::Spawn(argv, base + ".out", base + ".err", {.env = env});
  } catch (const std::exception& e) {
    r.err = e.what();
    return r;
  }
  if (!child->WaitExit(timeout)) {
    child->Kill();
    r.timed_out = true;
  }
  r.exit_code = child->ExitCode();
  r.out = child->Stdout();
  r.err = child->Stderr();
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

CmdResult RunInDir(const std::vector<std::string>& argv, const std::string& scratch_dir,
                   Millis timeout, const std::vector<std::string>& env) {
  static int seq = 0;
  return RunToExit(argv,
                   scratch_dir + "/cmd-" + std::to_string(getpid()) + "-" + std::to_string(++seq),
                   timeout, env);
}

// ---- every descendant ----

void ReapChildren() {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) Reaped()[pid] = status;
  // Only children a Child or RunToExit still waits for matter; forget
  // orphans (job processes that came to us as subreaper) once there are many.
  if (Reaped().size() > 10000) Reaped().clear();
}

bool KillAllDescendants() { return proc::KillAllDescendants(ReapChildren, 500); }

bool GroupAlive(pid_t pgid) {
  if (pgid <= 0) return false;
  if (kill(-pgid, 0) != 0 && errno == ESRCH) return false;
  // Usually the leader still runs: one file read decides.
  const auto runs = [pgid](const proc::Stat& st) {
    return st.pgrp == pgid && st.state != 'Z' && st.state != 'X';
  };
  if (auto leader = proc::StatOf(pgid); leader && runs(*leader)) return true;
  // Zombies count for kill(); look for a member that really runs.
  for (const auto& [pid, st] : proc::AllProcesses()) {
    if (runs(st)) return true;
  }
  return false;
}

ProcId Identify(pid_t pid) { return {pid, warden::ProcessStartTime(pid)}; }

bool Gone(const ProcId& p) { return !warden::ProcessAlive(p.pid, p.start); }

std::optional<std::string> FindTool(const std::string& name) {
  std::vector<std::string> dirs;
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  for (std::string dir; std::getline(ss, dir, ':');) {
    if (!dir.empty()) dirs.push_back(dir);
  }
  for (const char* d : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) dirs.emplace_back(d);
  for (const std::string& dir : dirs) {
    const std::string p = dir + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return std::nullopt;
}

}  // namespace warden::testing
