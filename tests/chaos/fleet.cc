#include "fleet.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <thread>

#include "warden/duration.h"
#include "ledger.h"
#include "poll_until.h"
#include "proc.h"

namespace chaos {

using warden::testing::Child;
using warden::testing::PollUntil;
using warden::testing::ReapChildren;
namespace {

using proc::EnvOf;

char StateOf(pid_t pid) {
  const auto st = proc::StatOf(pid);
  return st ? st->state : 'X';
}

std::string ExeOf(pid_t p) {
  char exe[512] = {};
  const ssize_t n = readlink(("/proc/" + std::to_string(p) + "/exe").c_str(),
                             exe, sizeof exe - 1);
  return std::string(exe, n > 0 ? static_cast<size_t>(n) : 0);
}

}  // namespace

std::vector<std::pair<pid_t, std::string>> LeftoverProcesses() {
  std::vector<std::pair<pid_t, std::string>> out;
  for (pid_t p : proc::DescendantsOf(getpid())) {
    const char st = StateOf(p);
    if (st == 'Z' || st == 'X') continue;
    char exe[512] = {};
    const ssize_t n = readlink(("/proc/" + std::to_string(p) + "/exe").c_str(),
                               exe, sizeof exe - 1);
    std::string path(exe, n > 0 ? static_cast<size_t>(n) : 0);
    const std::string base = path.substr(path.rfind('/') + 1);
    if (base == "postgres") continue;
    std::string what =
        "pid " + std::to_string(p) + " " + (base.empty() ? "?" : base);
    if (const std::string job = EnvOf(p, "WARDEN_JOB_ID"); !job.empty()) {
      what += " (job " + job + " attempt " + EnvOf(p, "WARDEN_ATTEMPT") + ")";
    }
    out.emplace_back(p, what);
  }
  return out;
}

std::vector<std::string> NodesOfSlots(int command_workers, int inproc_workers, int nodes) {
  const int workers = command_workers + inproc_workers;
  std::vector<std::string> out;
  if (nodes <= 0) return out;
  out.resize(static_cast<size_t>(workers));
  int k = 0;  // place in the interleaved order
  for (int i = 0; i < std::max(command_workers, inproc_workers); ++i) {
    for (int slot : {i < command_workers ? i : -1,
                     i < inproc_workers ? command_workers + i : -1}) {
      if (slot < 0) continue;
      std::string name = "node-";
      name += std::to_string(k * nodes / workers + 1);
      out[static_cast<size_t>(slot)] = name;
      ++k;
    }
  }
  return out;
}

Fleet::Fleet(FleetConfig config) : cfg_(std::move(config)) {
  const int n = cfg_.command_workers + cfg_.inproc_workers;
  slots_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Slot& s = slots_[static_cast<size_t>(i)];
    s.command = i < cfg_.command_workers;
    s.base = (s.command ? "cmd-" : "inproc-") +
             std::to_string(s.command ? i + 1 : i - cfg_.command_workers + 1);
    s.name = s.base;
  }
}

Fleet::~Fleet() {
  for (Slot& s : slots_) {
    if (s.proc && !s.proc->Exited()) {
      for (pid_t p : s.frozen_under) kill(p, SIGCONT);
      s.proc->Kill();
    }
  }
}

bool Fleet::command_slot(int slot) const {
  return slots_.at(static_cast<size_t>(slot)).command;
}

void Fleet::StartAll() {
  for (int i = 0; i < slots(); ++i) Spawn(i, false);
}

bool Fleet::Up(int slot) const {
  const Slot& s = slots_.at(static_cast<size_t>(slot));
  return s.proc && records_[s.record].end_ms < 0;
}

bool Fleet::Frozen(int slot) const {
  return Up(slot) && slots_.at(static_cast<size_t>(slot)).frozen;
}

const std::vector<pid_t>& Fleet::FrozenExecd(int slot) const {
  return slots_.at(static_cast<size_t>(slot)).frozen_execd;
}

pid_t Fleet::Pid(int slot) const {
  const Slot& s = slots_.at(static_cast<size_t>(slot));
  return s.proc ? s.proc->pid() : -1;
}

const std::string& Fleet::Name(int slot) const {
  return slots_.at(static_cast<size_t>(slot)).name;
}

std::string Fleet::Node(int slot) const {
  return cfg_.nodes.empty() ? std::string() : cfg_.nodes.at(static_cast<size_t>(slot));
}

void Fleet::Spawn(int slot, bool new_name) {
  Slot& s = slots_.at(static_cast<size_t>(slot));
  if (new_name) s.name = s.base + ".g" + std::to_string(++s.generation);
  const auto d = [](Millis m) { return warden::FormatDuration(m); };
  std::vector<std::string> argv;
  if (s.command) {
    argv = {cfg_.warden_bin,
            "--db",
            cfg_.db_url,
            "worker",
            "--allow-cmd",
            "--queues",
            cfg_.queue,
            "--name",
            s.name,
            "--concurrency",
            std::to_string(cfg_.concurrency),
            "--kill-grace",
            "300ms"};
  } else {
    argv = {cfg_.worker_bin,
            "--db",
            cfg_.db_url,
            "--name",
            s.name,
            "--ledger",
            cfg_.ledger,
            "--queues",
            cfg_.queue,
            "--concurrency",
            std::to_string(cfg_.concurrency)};
  }
  for (const auto& flag : std::vector<std::pair<std::string, std::string>>{
           {"--heartbeat", d(cfg_.heartbeat)},
           {"--lease", d(cfg_.lease)},
           {"--keepalive-threshold", d(cfg_.lease)},
           {"--sweep-interval", d(cfg_.sweep)},
           {"--shutdown-timeout", d(cfg_.shutdown_timeout)}}) {
    argv.push_back(flag.first);
    argv.push_back(flag.second);
  }
  const std::string node = Node(slot);
  if (!node.empty()) {
    argv.push_back("--node");
    argv.push_back(node);
  }
  ProcRecord r;
  r.slot = slot;
  r.name = s.name;
  r.command_worker = s.command;
  r.node = node;
  r.log_path =
      cfg_.dir + "/" + s.name + "." + std::to_string(records_.size()) + ".log";
  const auto& host = cfg_.hosts.empty()
                         ? std::nullopt
                         : cfg_.hosts.at(static_cast<size_t>(slot));
  if (host) r.host = host->hostname;
  r.spawn_ms = WallMs();
  s.proc = Child::Spawn(argv, r.log_path, r.log_path + ".err",
                        {.host = host, .die_with_parent = true});
  s.frozen = false;
  s.frozen_under.clear();
  r.pid = s.proc->pid();
  s.record = records_.size();
  records_.push_back(r);
}

void Fleet::Finish(Slot& s, int64_t at) {
  ProcRecord& r = records_[s.record];
  if (r.end_ms >= 0) return;
  r.end_ms = at;
  r.exit_code = s.proc->ExitCode();
  s.frozen = false;
}

int64_t Fleet::Kill(int slot) {
  if (!Up(slot)) return -1;
  Slot& s = slots_.at(static_cast<size_t>(slot));
  // Before the kill: a death proven within milliseconds must not seem to
  // come before it.
  const int64_t at = WallMs();
  kill(s.proc->pid(), SIGKILL);
  // A host freeze left its supervisors stopped: they must run to see the
  // worker gone and kill their jobs.
  for (pid_t p : s.frozen_under) kill(p, SIGCONT);
  s.frozen_under.clear();
  records_[s.record].killed_by_us = true;
  s.proc->Kill();  // reaps
  Finish(s, at);
  return at;
}

int64_t Fleet::Freeze(int slot, bool host,
                      const std::function<bool()>& between_transactions) {
  if (!Up(slot) || Frozen(slot)) return -1;
  Slot& s = slots_.at(static_cast<size_t>(slot));
  const pid_t pid = s.proc->pid();
  int64_t at = -1;
  for (int attempt = 0; attempt < 20 && at < 0; ++attempt) {
    kill(pid, SIGSTOP);
    const int64_t sent = WallMs();
    if (!PollUntil(
            [&] { return proc::AllThreadsStopped(pid) || s.proc->Exited(); },
            Millis(5000), Millis(2)) ||
        s.proc->Exited()) {
      kill(pid, SIGCONT);
      return -1;
    }
    if (!between_transactions || between_transactions()) {
      at = sent;
      break;
    }
    kill(pid, SIGCONT);
    // Back off, to let it commit: not a wait for a state.
    std::this_thread::sleep_for(Millis(20 + 10 * attempt));
  }
  if (at < 0) return -1;
  s.frozen = true;
  if (host) {
    // Processes may appear under it while we look (a supervisor forking its
    // job): look again until nothing new turns up.
    std::set<pid_t> stopped;
    s.frozen_execd.clear();
    const std::string worker_exe = ExeOf(pid);
    for (int round = 0; round < 10; ++round) {
      bool fresh = false;
      for (pid_t p : proc::DescendantsOf(pid)) {
        if (stopped.insert(p).second) {
          kill(p, SIGSTOP);
          s.frozen_under.push_back(p);
          fresh = true;
        }
      }
      if (!fresh) break;
    }
    // Supervisors, and jobs not yet past their start check, are forks of the
    // worker that have not exec'd (a stopped process's exe is stable).
    for (pid_t p : s.frozen_under) {
      if (ExeOf(p) != worker_exe) s.frozen_execd.push_back(p);
    }
  }
  return at;
}

int64_t Fleet::Thaw(int slot) {
  Slot& s = slots_.at(static_cast<size_t>(slot));
  if (!s.proc || !s.frozen) return -1;
  kill(s.proc->pid(), SIGCONT);
  const int64_t at = WallMs();
  for (pid_t p : s.frozen_under) kill(p, SIGCONT);
  s.frozen_under.clear();
  s.frozen = false;
  return at;
}

std::vector<JobProcess> Fleet::JobProcesses() const {
  std::vector<JobProcess> out;
  for (int i = 0; i < slots(); ++i) {
    const Slot& s = slots_[static_cast<size_t>(i)];
    if (!s.command || !Up(i)) continue;
    for (pid_t p : proc::DescendantsOf(s.proc->pid())) {
      char exe[512] = {};
      const ssize_t n = readlink(
          ("/proc/" + std::to_string(p) + "/exe").c_str(), exe, sizeof exe - 1);
      const std::string path(exe, n > 0 ? static_cast<size_t>(n) : 0);
      if (path.size() < 16 ||
          path.compare(path.size() - 16, 16, "warden_chaos_job") != 0) {
        continue;
      }
      const char st = StateOf(p);
      if (st == 'T' || st == 't' || st == 'Z' || st == 'X' || getpgid(p) != p)
        continue;
      JobProcess j;
      j.pid = p;
      j.job = std::atoll(EnvOf(p, "WARDEN_JOB_ID").c_str());
      j.attempt = std::atoi(EnvOf(p, "WARDEN_ATTEMPT").c_str());
      j.worker_pid = s.proc->pid();
      out.push_back(j);
    }
  }
  return out;
}

std::vector<ProcRecord> Fleet::Poll() {
  ReapChildren();
  std::vector<ProcRecord> out;
  for (int i = 0; i < slots(); ++i) {
    Slot& s = slots_[static_cast<size_t>(i)];
    if (!s.proc || records_[s.record].end_ms >= 0 || !s.proc->Exited())
      continue;
    Finish(s, WallMs());
    out.push_back(records_[s.record]);
  }
  return out;
}

std::vector<std::string> Fleet::StopAll(Millis timeout) {
  // A worker respawned a moment ago may not have blocked SIGTERM yet (it
  // would die of it, which says nothing about warden): wait until it runs.
  PollUntil(
      [&] {
        for (int i = 0; i < slots(); ++i) {
          const ProcRecord& r = records_[slots_[static_cast<size_t>(i)].record];
          if (Up(i) &&
              proc::ReadFile(r.log_path + ".err").find("started as worker") ==
                  std::string::npos) {
            return false;
          }
        }
        return true;
      },
      Millis(10'000), Millis(20));
  for (int i = 0; i < slots(); ++i) {
    if (!Up(i)) continue;
    Thaw(i);
    records_[slots_[static_cast<size_t>(i)].record].stopped_by_us = true;
    kill(Pid(i), SIGTERM);
  }
  PollUntil(
      [&] {
        ReapChildren();
        for (int i = 0; i < slots(); ++i) {
          Slot& s = slots_[static_cast<size_t>(i)];
          if (Up(i) && s.proc->Exited()) Finish(s, WallMs());
          if (Up(i)) return false;
        }
        return true;
      },
      timeout, Millis(20));
  std::vector<std::string> late;
  for (int i = 0; i < slots(); ++i) {
    if (!Up(i)) continue;
    Slot& s = slots_[static_cast<size_t>(i)];
    late.push_back(s.name);
    s.proc->Kill();
    Finish(s, WallMs());
  }
  return late;
}

}  // namespace chaos
