#include "store/sqlite/wake_socket.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace warden {
namespace {

bool FillAddress(const std::string& path, sockaddr_un* addr) {
  if (path.size() >= sizeof(addr->sun_path)) return false;
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  std::memcpy(addr->sun_path, path.c_str(), path.size() + 1);
  return true;
}

}  // namespace

std::string WakeDirFor(const std::string& db_path) {
  if (db_path.empty() || db_path == ":memory:") return {};
  return db_path + ".wake";
}

WakeListener::~WakeListener() {
  if (fd_ >= 0) close(fd_);
  if (!path_.empty()) unlink(path_.c_str());
}

Status WakeListener::Bind(const std::string& dir, const std::string& name) {
  if (dir.empty()) return Status::Ok();
  // Private, as the database beside it is: whoever may write a datagram
  // here learns nothing, but wakes the workers at will.
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Unavailable("cannot create " + dir + ": " + std::strerror(errno));
  }
  const std::string path = dir + "/" + name + ".sock";
  sockaddr_un addr;
  if (!FillAddress(path, &addr)) return InvalidArgument("socket path too long: " + path);
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unavailable(std::string("socket: ") + std::strerror(errno));
  unlink(path.c_str());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    close(fd);
    return Unavailable("bind " + path + ": " + std::strerror(err));
  }
  fd_ = fd;
  path_ = path;
  return Status::Ok();
}

bool WakeListener::Drain() {
  char buf[64];
  bool any = false;
  while (fd_ >= 0 && recv(fd_, buf, sizeof buf, 0) >= 0) any = true;
  return any;
}

void NotifyWorkers(const std::string& dir) {
  if (dir.empty()) return;
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    closedir(d);
    return;
  }
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".sock") != 0) continue;
    const std::string path = dir + "/" + name;
    sockaddr_un addr;
    if (!FillAddress(path, &addr)) continue;
    const char byte = 0;
    if (sendto(fd, &byte, 1, 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 &&
        errno == ECONNREFUSED) {
      unlink(path.c_str());  // its worker is gone
    }
  }
  close(fd);
  closedir(d);
}

}  // namespace warden
