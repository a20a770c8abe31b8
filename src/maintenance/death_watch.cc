#include "maintenance/death_watch.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <set>

#include "env/process.h"

namespace warden {

DeathWatch::~DeathWatch() {
  for (auto& [id, fd] : fds_) close(fd);
}

void DeathWatch::Set(const std::vector<WorkerLiveness>& workers, const std::string& node,
                     const std::string& pid_ns) {
  std::set<WorkerId> wanted;
  for (const WorkerLiveness& w : workers) {
    // Another namespace's pid would look gone (or be someone else) here:
    // already_gone_ on every pass would make the sweeper spin.
    if (w.node != node || w.pid_ns != pid_ns || w.pid == getpid()) continue;
    wanted.insert(w.id);
    if (fds_.count(w.id)) continue;
    const int fd = static_cast<int>(syscall(SYS_pidfd_open, w.pid, 0));
    if (fd < 0 || !ProcessAlive(w.pid, w.pid_start)) {
      if (fd >= 0) close(fd);
      already_gone_ = true;  // the next sweep proves it
      continue;
    }
    fds_[w.id] = fd;
  }
  for (auto it = fds_.begin(); it != fds_.end();) {
    if (wanted.count(it->first)) {
      ++it;
    } else {
      close(it->second);
      it = fds_.erase(it);
    }
  }
}

bool DeathWatch::Wait(Millis timeout, int wake_fd) {
  if (already_gone_) {
    already_gone_ = false;
    return true;
  }
  std::vector<pollfd> fds;
  fds.push_back({wake_fd, POLLIN, 0});
  for (auto& [id, fd] : fds_) fds.push_back({fd, POLLIN, 0});
  const int n = poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
  if (n <= 0) return false;
  for (size_t i = 1; i < fds.size(); ++i) {
    if (fds[i].revents) return true;
  }
  return false;
}

}  // namespace warden
