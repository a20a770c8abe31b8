// What the tests read from /proc: files, processes, their parents, states
// and environment. Shared by the integration, partition and chaos tests,
// which all clean up (and inspect) the process trees they start.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace proc {

// The whole file ("" if it cannot be read).
std::string ReadFile(const std::string& path);

// From /proc/PID/stat.
struct Stat {
  char state = '?';  // R, S, D, T, t, Z, X ...
  pid_t ppid = 0;
  pid_t pgrp = 0;
};
// nullopt: no such process (any more).
std::optional<Stat> StatOf(pid_t pid);
// Every process this pid namespace shows.
std::map<pid_t, Stat> AllProcesses();
// Children, grandchildren ... of `root`, zombies included.
std::vector<pid_t> DescendantsOf(pid_t root);
// A zombie, or already reaped and gone.
bool Exited(pid_t pid);
// VALUE of NAME=VALUE in /proc/PID/environ ("" if absent or unreadable).
std::string EnvOf(pid_t pid, const std::string& name);
// Every thread of `pid` is stopped (a SIGSTOP group stop is complete).
bool AllThreadsStopped(pid_t pid);
// SIGKILLs every descendant of this process that has not exited (and its
// process group, if it leads one), then calls `reap`; again every 10 ms
// until none runs. false if some still ran after `rounds` rounds.
bool KillAllDescendants(const std::function<void()>& reap, int rounds);

}  // namespace proc
