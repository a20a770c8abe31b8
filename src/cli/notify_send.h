// The two calls of systemd's notify protocol that ServiceNotifier
// (cli/service_notify.h) makes, with two implementations, one linked into
// a given `warden` (CMakeLists.txt, WARDEN_SYSTEMD; docs/install.md):
//   notify_send_libsystemd.cc  sd_notify(3) and sd_watchdog_enabled(3)
//   notify_send_builtin.cc     the same protocol in a few lines: one
//                              AF_UNIX datagram to NOTIFY_SOCKET (a path,
//                              or @name for an abstract socket)
//
// Thread safety: both from any thread; they read the environment.
#pragma once

#include <cstdint>
#include <string>

namespace warden::cli {

// Sends `message` ("READY=1\nSTATUS=...") to $NOTIFY_SOCKET; false when
// it was not sent (none set, no such socket, the manager gone).
bool NotifySend(const std::string& message);

// WATCHDOG_USEC when the manager expects this process to send WATCHDOG=1
// (WATCHDOG_PID unset or this pid); 0 otherwise.
uint64_t NotifyWatchdogUsec();

}  // namespace warden::cli
