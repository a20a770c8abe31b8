#include "maintenance/death_watch.h"

#include <set>

namespace warden {

DeathWatch::~DeathWatch() {
  for (auto& [id, fd] : fds_) env_.CloseFd(fd);
}

void DeathWatch::Set(const std::vector<WorkerLiveness>& workers) {
  const HostFacts& self = env_.Host();
  std::set<WorkerId> wanted;
  for (const WorkerLiveness& w : workers) {
    // Another namespace's pid would look gone (or be someone else) here:
    // already_gone_ on every pass would make the sweeper spin.
    if (w.host != self.node || w.pid_ns != self.pid_ns || w.pid == self.pid) continue;
    wanted.insert(w.id);
    if (fds_.count(w.id)) continue;
    // Opened before the check, so the fd is for the process checked.
    const int fd = env_.PidfdOpen(w.pid);
    if (!env_.ProcessAlive(w.pid, w.pid_start)) {
      env_.CloseFd(fd);
      already_gone_ = true;  // the next sweep proves it
      continue;
    }
    // No pidfd (an old kernel, out of fds): the periodic pass finds its
    // death; waking at once every pass would make the sweeper spin.
    if (fd < 0) continue;
    fds_[w.id] = fd;
  }
  for (auto it = fds_.begin(); it != fds_.end();) {
    if (wanted.count(it->first)) {
      ++it;
    } else {
      env_.CloseFd(it->second);
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
  const int n = env_.Poll(fds, env_.clock().MonotonicMs() + timeout.count());
  if (n <= 0) return false;
  for (size_t i = 1; i < fds.size(); ++i) {
    if (fds[i].revents) return true;
  }
  return false;
}

}  // namespace warden
