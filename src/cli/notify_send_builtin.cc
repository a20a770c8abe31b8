// NotifySend and NotifyWatchdogUsec without libsystemd (WARDEN_SYSTEMD
// OFF, or AUTO where it is missing). The notify protocol (sd_notify(3),
// "NOTIFY_SOCKET" in systemd.exec(5)) is one datagram of newline-separated
// assignments to an AF_UNIX socket: a path, or "@name" for the abstract
// namespace. The manager learns the sender's pid from the socket itself
// (SO_PASSCRED), so NotifyAccess=main holds. What it leaves out of
// libsystemd's: other address families (vsock:, for a virtual machine's
// manager), which it reports as not sent.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "cli/notify_send.h"

namespace warden::cli {
namespace {

// "12345" as a number; 0 for anything else (an empty value, a sign,
// trailing bytes).
uint64_t ParseUnsigned(const char* text) {
  if (text == nullptr) return 0;
  const std::string_view s(text);
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size() ? value : 0;
}

}  // namespace

bool NotifySend(const std::string& message) {
  const char* env = std::getenv("NOTIFY_SOCKET");
  if (env == nullptr || (env[0] != '/' && env[0] != '@')) return false;
  const std::string_view path(env);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() > sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // abstract: no NUL at the end
  // A path's length counts its NUL when there is room for one (sun_path is
  // zeroed); an abstract name's does not.
  const socklen_t length = static_cast<socklen_t>(
      offsetof(sockaddr_un, sun_path) + path.size() +
      (path[0] == '/' && path.size() < sizeof(addr.sun_path) ? 1 : 0));
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ssize_t sent;
  do {
    sent = sendto(fd, message.data(), message.size(), MSG_NOSIGNAL,
                  reinterpret_cast<const sockaddr*>(&addr), length);
  } while (sent < 0 && errno == EINTR);
  close(fd);
  return sent == static_cast<ssize_t>(message.size());
}

uint64_t NotifyWatchdogUsec() {
  const uint64_t usec = ParseUnsigned(std::getenv("WATCHDOG_USEC"));
  if (usec == 0) return 0;
  // Meant for another process (a parent that exec'd us is not us).
  if (const char* pid = std::getenv("WATCHDOG_PID");
      pid != nullptr && ParseUnsigned(pid) != static_cast<uint64_t>(getpid())) {
    return 0;
  }
  return usec;
}

}  // namespace warden::cli
