#include "proc.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace proc {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<Stat> StatOf(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  // The command name (in parentheses) may hold spaces and parentheses.
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(paren + 1));
  std::string state;
  long ppid = 0, pgrp = 0;
  if (!(rest >> state >> ppid >> pgrp) || state.empty()) return std::nullopt;
  return Stat{state[0], static_cast<pid_t>(ppid), static_cast<pid_t>(pgrp)};
}

std::map<pid_t, Stat> AllProcesses() {
  std::map<pid_t, Stat> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    if (auto st = StatOf(static_cast<pid_t>(pid))) out[static_cast<pid_t>(pid)] = *st;
  }
  closedir(d);
  return out;
}

std::vector<pid_t> DescendantsOf(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, st] : AllProcesses()) children.emplace(st.ppid, pid);
  std::vector<pid_t> out;
  std::vector<pid_t> todo = {root};
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

bool Exited(pid_t pid) {
  const auto st = StatOf(pid);
  return !st || st->state == 'Z' || st->state == 'X';
}

std::string EnvOf(pid_t pid, const std::string& name) {
  const std::string env = ReadFile("/proc/" + std::to_string(pid) + "/environ");
  const std::string key = name + "=";
  size_t pos = 0;
  while (pos < env.size()) {
    const size_t end = env.find('\0', pos);
    const std::string entry = env.substr(pos, end == std::string::npos ? end : end - pos);
    if (entry.rfind(key, 0) == 0) return entry.substr(key.size());
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return "";
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

bool KillAllDescendants(const std::function<void()>& reap, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    bool any = false;
    for (pid_t pid : DescendantsOf(getpid())) {
      if (Exited(pid)) continue;
      any = true;
      const pid_t pgid = getpgid(pid);
      if (pgid > 0 && pgid != getpgrp() && pgid == pid) kill(-pgid, SIGKILL);
      kill(pid, SIGKILL);
    }
    reap();
    if (!any) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace proc
