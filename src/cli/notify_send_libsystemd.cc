// NotifySend and NotifyWatchdogUsec through libsystemd (WARDEN_SYSTEMD ON,
// or AUTO where it is found): whatever NOTIFY_SOCKET addresses systemd
// knows, today and later (a vsock: address, say), it reaches.
#include <systemd/sd-daemon.h>

#include "cli/notify_send.h"

namespace warden::cli {

bool NotifySend(const std::string& message) {
  // The environment is kept: jobs do not inherit it anyway
  // (env/subprocess.cc leaves NOTIFY_SOCKET out).
  return sd_notify(/*unset_environment=*/0, message.c_str()) > 0;
}

uint64_t NotifyWatchdogUsec() {
  uint64_t usec = 0;
  return sd_watchdog_enabled(/*unset_environment=*/0, &usec) > 0 ? usec : 0;
}

}  // namespace warden::cli
