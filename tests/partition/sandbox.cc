#include "sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "env/process.h"
#include "proc.h"

extern char** environ;

namespace pt {
namespace {

// Exit statuses of children reaped by ReapChildren before their Child or
// Run asked (pid -> raw wait status).
std::map<pid_t, int>& Reaped() {
  static std::map<pid_t, int> reaped;
  return reaped;
}

// Whether `pid` has exited; its raw status in *status. Never blocks.
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
    *status = -1;  // reaped elsewhere; status unknown
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

// fork + exec with stdio redirected; inside `host`'s namespaces if given.
// Everything is prepared before fork: the child only makes system calls.
pid_t SpawnProcess(std::vector<std::string> argv, std::vector<std::string> env,
                   const std::string& out_path, const std::string& err_path,
                   const std::optional<Host>& host, bool die_with_parent) {
  std::vector<char*> cargv = CStrings(argv);
  std::vector<char*> cenv = CStrings(env);
  const std::string ns_path = host ? "/run/netns/" + host->netns : "";
  const std::string hostname = host ? host->hostname : "";
  const int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  const int ns = host ? open(ns_path.c_str(), O_RDONLY | O_CLOEXEC) : -1;
  const pid_t parent = getpid();
  if (in < 0 || out < 0 || err < 0 || (host && ns < 0)) {
    const std::string why = std::strerror(errno);
    for (int fd : {in, out, err, ns}) {
      if (fd >= 0) close(fd);
    }
    throw std::runtime_error("cannot open stdio files or " + ns_path + ": " + why);
  }
  const pid_t pid = fork();
  if (pid == 0) {
    if (die_with_parent) {
      // A test killed outright (a ctest timeout) must not leave workers
      // running; their supervisors then kill the jobs.
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(120);
    }
    if (host) {
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

int64_t NowMs() {
  return std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t ParseTime(const std::string& s) {
  int y, mo, d, h, mi, sec, ms;
  char z;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &y, &mo, &d, &h, &mi, &sec, &ms,
                  &z) != 8 ||
      z != 'Z') {
    return -1;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

bool WaitFor(const std::function<bool()>& cond, Millis timeout, Millis every) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (cond()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
}

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

std::string CmdResult::Describe() const {
  return "exit " + std::to_string(exit_code) + "; stdout: " + out + "; stderr: " + err;
}

CmdResult Run(const std::vector<std::string>& argv, const std::string& scratch_dir, Millis timeout,
              const std::vector<std::string>& env) {
  static int seq = 0;
  const std::string base =
      scratch_dir + "/cmd-" + std::to_string(getpid()) + "-" + std::to_string(++seq);
  CmdResult r;
  pid_t pid;
  try {
    pid = SpawnProcess(argv, EnvWith(env), base + ".out", base + ".err", std::nullopt, false);
  } catch (const std::exception& e) {
    r.err = e.what();
    return r;
  }
  int status = 0;
  const bool done = WaitFor([&] { return TryReap(pid, &status); }, timeout, Millis(2));
  if (!done) {
    kill(pid, SIGKILL);
    while (!TryReap(pid, &status)) std::this_thread::sleep_for(Millis(1));
    r.err = "timed out after " + std::to_string(timeout.count()) + "ms; ";
  }
  r.exit_code = DecodeStatus(status);
  r.out = ReadFile(base + ".out");
  r.err += ReadFile(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

// ---- Child ----

std::unique_ptr<Child> Child::Spawn(const std::vector<std::string>& argv,
                                    const std::string& out_path, const std::string& err_path,
                                    const std::optional<Host>& host) {
  std::unique_ptr<Child> c(new Child());
  c->out_path_ = out_path;
  c->err_path_ = err_path;
  c->pid_ = SpawnProcess(argv, EnvWith({}), out_path, err_path, host, true);
  return c;
}

Child::~Child() { Kill(); }

bool Child::Signal(int sig) { return !Exited() && kill(pid_, sig) == 0; }

void Child::Kill() {
  if (Exited()) return;
  kill(pid_, SIGKILL);
  while (!Exited()) std::this_thread::sleep_for(Millis(1));
}

bool Child::Exited() {
  if (!reaped_ && TryReap(pid_, &status_)) reaped_ = true;
  return reaped_;
}

bool Child::WaitExit(Millis timeout) {
  return WaitFor([this] { return Exited(); }, timeout, Millis(5));
}

int Child::ExitCode() const { return reaped_ ? DecodeStatus(status_) : -1; }

void ReapChildren() {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) Reaped()[pid] = status;
  // Only children a Child or Run still waits for matter; forget orphans
  // (job processes that came to us as subreaper) once there are many.
  if (Reaped().size() > 10000) Reaped().clear();
}

void KillAllDescendants() {
  if (!proc::KillAllDescendants(ReapChildren, 500)) {
    std::fprintf(stderr, "[ sandbox  ] could not kill every process the test started\n");
  }
}

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

// ---- Network ----

Network::Network(std::string ip, std::string bridge, std::string scratch_dir, std::string id)
    : ip_(std::move(ip)),
      bridge_(std::move(bridge)),
      scratch_(std::move(scratch_dir)),
      db_ns_("wardenDB-" + id),
      a_ns_("wardenA-" + id),
      b_ns_("wardenB-" + id) {}

Network::~Network() { Destroy(); }

std::string Network::Ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ip_};
  argv.insert(argv.end(), args.begin(), args.end());
  CmdResult r = Run(argv, scratch_, Millis(20'000));
  if (r.exit_code == 0) return "";
  std::string cmd;
  for (const std::string& a : argv) cmd += a + " ";
  return cmd + "failed: " + r.Describe();
}

std::string Network::Create() {
  // Locally administered MACs, fixed so that the neighbour entries below can
  // name them.
  const char* kMacDb = "02:00:0a:d5:00:01";
  const char* kMacA = "02:00:0a:d5:00:02";
  const char* kMacB = "02:00:0a:d5:00:03";
  for (const std::string& ns : {db_ns_, a_ns_, b_ns_}) {
    // Our names (they carry our pid): one left over by a killed run that
    // had the same pid is stale.
    struct stat st;
    if (::stat(("/run/netns/" + ns).c_str(), &st) == 0) (void)Ip({"netns", "del", ns});
    if (std::string e = Ip({"netns", "add", ns}); !e.empty()) return e;
    created_.push_back(ns);
    if (std::string e = Ip({"-n", ns, "link", "set", "lo", "up"}); !e.empty()) return e;
  }
  const std::vector<std::vector<std::string>> steps = {
      {"-n", db_ns_, "link", "add", "br0", "address", kMacDb, "type", "bridge"},
      {"-n", db_ns_, "addr", "add", std::string(kDbAddr) + "/24", "dev", "br0"},
      {"-n", db_ns_, "link", "set", "br0", "up"},
      // Each veth is made directly inside its two namespaces.
      {"link", "add", "eth0", "netns", a_ns_, "address", kMacA, "type", "veth", "peer", "name",
       "vA", "netns", db_ns_},
      {"link", "add", "eth0", "netns", b_ns_, "address", kMacB, "type", "veth", "peer", "name",
       "vB", "netns", db_ns_},
      {"-n", db_ns_, "link", "set", "vA", "master", "br0"},
      {"-n", db_ns_, "link", "set", "vB", "master", "br0"},
      {"-n", db_ns_, "link", "set", "vA", "up"},
      {"-n", db_ns_, "link", "set", "vB", "up"},
      {"-n", a_ns_, "addr", "add", std::string(Addr(kA)) + "/24", "dev", "eth0"},
      {"-n", b_ns_, "addr", "add", std::string(Addr(kB)) + "/24", "dev", "eth0"},
      {"-n", a_ns_, "link", "set", "eth0", "up"},
      {"-n", b_ns_, "link", "set", "eth0", "up"},
      {"-n", a_ns_, "neigh", "replace", kDbAddr, "lladdr", kMacDb, "dev", "eth0", "nud",
       "permanent"},
      {"-n", b_ns_, "neigh", "replace", kDbAddr, "lladdr", kMacDb, "dev", "eth0", "nud",
       "permanent"},
      {"-n", db_ns_, "neigh", "replace", Addr(kA), "lladdr", kMacA, "dev", "br0", "nud",
       "permanent"},
      {"-n", db_ns_, "neigh", "replace", Addr(kB), "lladdr", kMacB, "dev", "br0", "nud",
       "permanent"},
  };
  for (const auto& step : steps) {
    if (std::string e = Ip(step); !e.empty()) return e;
  }
  // A bridge port forwards once its link is up on both ends.
  for (Side side : {kA, kB}) {
    std::string e;
    WaitFor([&] { return (e = Heal(side)).empty(); }, Millis(5000), Millis(20));
    if (!e.empty()) return e;
  }
  return "";
}

void Network::Destroy() {
  // Deleting a namespace deletes its links (a veth goes with either end,
  // the bridge with the database namespace).
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    if (std::string e = Ip({"netns", "del", *it}); !e.empty()) {
      std::fprintf(stderr, "[ sandbox  ] %s\n", e.c_str());
    }
  }
  created_.clear();
}

std::string Network::SetPortState(Side side, const char* state, const char* expect) {
  const std::string port = side == kA ? "vA" : "vB";
  CmdResult r = Run({bridge_, "-n", db_ns_, "link", "set", "dev", port, "state", state}, scratch_,
                    Millis(10'000));
  if (r.exit_code != 0)
    return "bridge link set dev " + port + " state " + state + ": " + r.Describe();
  // The kernel may accept a state and then override it (a "blocking" port
  // of a bridge without STP is made forwarding again): check.
  r = Run({bridge_, "-n", db_ns_, "link", "show", "dev", port}, scratch_, Millis(10'000));
  if (r.out.find(std::string("state ") + expect) == std::string::npos) {
    return "bridge port " + port + " is not " + expect + ": " + r.Describe();
  }
  return "";
}

std::string Network::Cut(Side side) { return SetPortState(side, "0", "disabled"); }
std::string Network::Heal(Side side) { return SetPortState(side, "3", "forwarding"); }

// ---- Cluster ----

Cluster::~Cluster() { Stop(); }

std::string Cluster::Start(const std::string& ip, const std::string& netns,
                           const std::string& listen) {
  CmdResult r = Run({ip, "netns", "exec", netns, script_, "start", dir_}, scratch_, Millis(120'000),
                    {"PG_CLUSTER_LISTEN_EXTRA=" + listen});
  started_ = true;  // stop even a half-started server
  if (r.exit_code != 0) return "pg-cluster.sh start failed: " + r.Describe();
  port_ = std::atoi(ReadFile(dir_ + "/port").c_str());
  if (port_ <= 0) return "pg-cluster.sh start left no port file in " + dir_;
  return "";
}

void Cluster::Stop() {
  if (!started_) return;
  started_ = false;
  CmdResult r = Run({script_, "stop", dir_}, scratch_, Millis(120'000));
  if (r.exit_code != 0) {
    std::fprintf(stderr, "[ sandbox  ] pg-cluster.sh stop failed: %s\n", r.Describe().c_str());
  }
}

std::string Cluster::LocalUrl() const {
  return "postgresql://postgres@/warden_test?host=" + dir_ + "&port=" + std::to_string(port_);
}

std::string Cluster::TcpUrl(const std::string& addr) const {
  return "postgresql://postgres@" + addr + ":" + std::to_string(port_) + "/warden_test";
}

// ---- leftovers of killed runs ----

void WriteOwner(const std::string& dir) {
  std::ofstream(dir + "/owner") << getpid() << " " << warden::ProcessStartTime(getpid()) << "\n";
}

std::vector<std::string> SweepStaleRuns(const std::string& tmp_root, const std::string& ip,
                                        const std::string& cluster_script,
                                        const std::string& scratch_dir) {
  std::vector<std::string> cleaned;
  glob_t g{};
  if (glob((tmp_root + "/warden-pt-*/owner").c_str(), 0, nullptr, &g) != 0) {
    globfree(&g);
    return cleaned;
  }
  std::vector<std::string> owners(g.gl_pathv, g.gl_pathv + g.gl_pathc);
  globfree(&g);
  for (const std::string& owner : owners) {
    std::istringstream in(ReadFile(owner));
    long pid = 0;
    long long start = -1;
    if (!(in >> pid >> start) || pid <= 0) continue;
    if (pid == getpid() || !warden::ProcessProvablyGone(static_cast<int>(pid), start)) continue;
    const std::string dir = owner.substr(0, owner.rfind('/'));
    if (access((dir + "/pg/bindir").c_str(), F_OK) == 0) {
      (void)Run({cluster_script, "stop", dir + "/pg"}, scratch_dir, Millis(120'000));
    }
    for (const char* prefix : {"wardenA-", "wardenB-", "wardenDB-"}) {
      const std::string ns = prefix + std::to_string(pid);
      if (access(("/run/netns/" + ns).c_str(), F_OK) == 0) {
        (void)Run({ip, "netns", "del", ns}, scratch_dir, Millis(20'000));
      }
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    cleaned.push_back(dir);
  }
  return cleaned;
}

}  // namespace pt
