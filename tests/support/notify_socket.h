// A service manager's end of the notify protocol (sd_notify(3)), as systemd
// binds it for a Type=notify unit: an AF_UNIX datagram socket whose path a
// test hands a real `warden worker` or `warden serve` in NOTIFY_SOCKET. A
// thread receives every message as it comes, with its arrival time and the
// sender's pid (SO_PASSCRED: what systemd's NotifyAccess=main checks).
//
//   wt::NotifySocket notify(dir() + "/notify");
//   ... start a process with NOTIFY_SOCKET=notify.path() ...
//   ASSERT_TRUE(WaitFor([&] { return notify.Has("READY=1"); }));
//
// Thread safety: every method from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "poll_until.h"

namespace wt {

class NotifySocket {
 public:
  struct Message {
    warden::testing::SteadyTime at;
    pid_t pid = -1;  // the sender's (-1: no credentials came)
    std::string text;  // "READY=1\nSTATUS=..."
    bool Has(const std::string& assignment) const;  // one whole line of it
  };

  // Binds `path` (removed first if it exists). Throws std::runtime_error.
  explicit NotifySocket(std::string path);
  ~NotifySocket();
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  const std::string& path() const { return path_; }
  std::vector<Message> Messages() const;
  // The messages with `assignment` as one of their lines ("WATCHDOG=1").
  std::vector<Message> With(const std::string& assignment) const;
  bool Has(const std::string& assignment) const { return !With(assignment).empty(); }
  // Every message so far, one a line, for failure output.
  std::string Dump() const;

 private:
  void Receive();

  std::string path_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<Message> messages_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace wt
