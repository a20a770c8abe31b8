// Facts about processes on this host, used to prove a worker dead: a worker
// row records (node, pid, pid start time, boot id); if the node is this host
// and that exact process is gone, the worker is dead for certain.
//
// A pid alone proves nothing because pids are reused, so a process is named
// by (pid, start time) where the start time is field 22 of /proc/PID/stat
// (clock ticks since boot). Start times are only comparable within one boot;
// compare BootId() too before trusting a match.
//
// Linux only (reads /proc). Thread safety: every function is thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace warden {

// This host's name (gethostname); "" if it cannot be read.
std::string HostName();

// The kernel's boot id (/proc/sys/kernel/random/boot_id), trimmed; "" if
// unreadable.
std::string BootId();

// This process's pid namespace ("pid:[4026531836]"); pids are only
// comparable within one. "" if unreadable.
std::string PidNamespace();

// Start time of process `pid` in clock ticks since boot, or -1 if there is no
// such process (zombies still have one).
int64_t ProcessStartTime(int pid);

// True iff process `pid` exists, is not a zombie, and started at
// `start_time` (a different start time means the pid was reused).
bool ProcessAlive(int pid, int64_t start_time);

// Like !ProcessAlive, but only when certain: false when /proc cannot tell
// (e.g. hidepid, or no permission), so a live process is never proven dead.
bool ProcessProvablyGone(int pid, int64_t start_time);

}  // namespace warden
