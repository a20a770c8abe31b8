// systemd's notify protocol (sd_notify(3); through libsystemd or warden's
// own sender, cli/notify_send.h) for `warden worker` and `warden serve`
// run by a `Type=notify` unit (deploy/systemd/): READY=1 once the command
// does its work, STOPPING=1 when it begins to drain, STATUS= lines for
// `systemctl status`, and, when the unit sets WatchdogSec=, WATCHDOG=1
// every half of WATCHDOG_USEC while the process is live (what "live"
// means is the command's: Worker::Live, the listener's I/O threads for
// serve). Without NOTIFY_SOCKET in the environment nothing is sent and no
// thread runs. A message that cannot be sent is dropped (the manager is
// gone or the socket wrong): the notices never stop the command.
//
// Thread safety: every method from any thread; Start once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "warden/warden.h"

namespace warden::cli {

class ServiceNotifier {
 public:
  ServiceNotifier();  // reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID
  ~ServiceNotifier();  // Stop()
  ServiceNotifier(const ServiceNotifier&) = delete;
  ServiceNotifier& operator=(const ServiceNotifier&) = delete;

  bool active() const { return active_; }
  // 0 when the manager expects no WATCHDOG=1 (no WATCHDOG_USEC, or it is
  // meant for another process: WATCHDOG_PID).
  std::chrono::microseconds watchdog() const { return watchdog_; }

  void Ready(const std::string& status);
  void Stopping(const std::string& status);
  void SetStatus(const std::string& status);

  // Starts the thread: every half of WATCHDOG_USEC (every 10 s without a
  // watchdog) it sends STATUS=status() and, while live() is Ok, WATCHDOG=1.
  // When live() fails it stops pinging, says why in STATUS= and in a log
  // line, and starts again if it recovers. Nothing without NOTIFY_SOCKET.
  void Start(std::function<warden::Status()> live, std::function<std::string()> status);
  // Ends the thread (the last pings are sent by then).
  void Stop();

 private:
  void Loop();
  void Send(const std::string& message);

  bool active_ = false;
  std::chrono::microseconds watchdog_{0};
  std::function<warden::Status()> live_;
  std::function<std::string()> status_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace warden::cli
