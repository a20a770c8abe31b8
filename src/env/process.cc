#include "env/process.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>

namespace warden {
namespace {

// Reads a small /proc file whole; nullopt if it cannot be opened.
std::optional<std::string> ReadProcFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

struct StatFields {
  char state = '?';
  int64_t start_time = -1;
};

// Parses /proc/PID/stat. Field 2 (comm) is in parentheses and may itself
// contain spaces and ')', so fields are counted from the LAST ')'.
std::optional<StatFields> ReadStat(int pid) {
  if (pid <= 0) return std::nullopt;
  std::optional<std::string> text =
      ReadProcFile("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return std::nullopt;
  size_t close_paren = text->rfind(')');
  if (close_paren == std::string::npos) return std::nullopt;
  // After ") " come field 3 (state), 4, ... 22 (starttime).
  const char* p = text->c_str() + close_paren + 1;
  StatFields fields;
  for (int field = 3; field <= 22; ++field) {
    while (*p == ' ') ++p;
    if (*p == '\0') return std::nullopt;
    if (field == 3) fields.state = *p;
    if (field == 22) {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(p, &end, 10);
      if (end == p || errno != 0 || v < 0) return std::nullopt;
      fields.start_time = v;
      return fields;
    }
    while (*p != ' ' && *p != '\0') ++p;
  }
  return std::nullopt;
}

}  // namespace

std::string HostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

std::string BootId() {
  std::optional<std::string> text =
      ReadProcFile("/proc/sys/kernel/random/boot_id");
  if (!text) return "";
  const char* ws = " \t\r\n";
  size_t begin = text->find_first_not_of(ws);
  if (begin == std::string::npos) return "";
  size_t end = text->find_last_not_of(ws);
  return text->substr(begin, end - begin + 1);
}

std::string PidNamespace() {
  char buf[128] = {};
  const ssize_t n = readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

bool ProcessProvablyGone(int pid, int64_t start_time) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  // The pid exists: gone only if /proc shows another process or a zombie.
  if (ProcessStartTime(pid) < 0) return false;  // unreadable: cannot tell
  return !ProcessAlive(pid, start_time);
}

int64_t ProcessStartTime(int pid) {
  std::optional<StatFields> fields = ReadStat(pid);
  return fields ? fields->start_time : -1;
}

bool ProcessAlive(int pid, int64_t start_time) {
  std::optional<StatFields> fields = ReadStat(pid);
  if (!fields) return false;
  // 'Z' zombie, 'X'/'x' dead: exited, only the bookkeeping is left.
  if (fields->state == 'Z' || fields->state == 'X' || fields->state == 'x') {
    return false;
  }
  return fields->start_time == start_time;
}

}  // namespace warden
