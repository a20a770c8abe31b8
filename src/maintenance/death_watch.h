// DeathWatch: learn within milliseconds that a worker process on this host
// has exited, instead of on the next sweep.
//
// Holds a pidfd for each watched worker; a pidfd becomes readable when its
// process exits. A pidfd is opened by pid and then checked against the
// recorded start time, so a reused pid is never mistaken for the worker.
//
// Thread safety: used by one thread (the sweeper).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "env/env.h"
#include "store/store.h"

namespace warden {

class DeathWatch {
 public:
  explicit DeathWatch(Env& env) : env_(env) {}
  ~DeathWatch();
  DeathWatch(const DeathWatch&) = delete;
  DeathWatch& operator=(const DeathWatch&) = delete;

  // Watches exactly these workers, but for those on other hosts or in
  // another pid namespace of this one (a container sharing the host name):
  // their pids mean nothing here.
  void Set(const std::vector<WorkerLiveness>& workers);
  // Waits up to `timeout` or until `wake_fd` is readable. true: a watched
  // process exited (or was already gone).
  bool Wait(Millis timeout, int wake_fd);

 private:
  Env& env_;
  std::map<WorkerId, int> fds_;
  bool already_gone_ = false;
};

}  // namespace warden
