#include "cli/service_notify.h"

#include <algorithm>
#include <cstdlib>

#include "cli/log_out.h"
#include "cli/notify_send.h"
#include "warden/text.h"

namespace warden::cli {
namespace {

// A STATUS= value is one line: a newline would start another assignment.
std::string StatusLine(const std::string& text) { return "STATUS=" + OneLine(text, 400); }

}  // namespace

ServiceNotifier::ServiceNotifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  active_ = socket != nullptr && *socket != '\0';
  // > 0: WATCHDOG_USEC is set, and WATCHDOG_PID, if set, is this process.
  // The environment is kept (NotifySend reads NOTIFY_SOCKET at each call);
  // jobs do not inherit it (env/subprocess.cc leaves it out).
  if (active_) {
    if (const uint64_t usec = NotifyWatchdogUsec(); usec > 0) {
      watchdog_ = std::chrono::microseconds(usec);
    }
  }
}

ServiceNotifier::~ServiceNotifier() { Stop(); }

void ServiceNotifier::Send(const std::string& message) {
  if (!active_) return;
  // Not sent (no such socket, the manager gone): nothing to do about it.
  (void)NotifySend(message);
}

void ServiceNotifier::Ready(const std::string& status) {
  Send("READY=1\n" + StatusLine(status));
}

void ServiceNotifier::Stopping(const std::string& status) {
  Send("STOPPING=1\n" + StatusLine(status));
}

void ServiceNotifier::SetStatus(const std::string& status) { Send(StatusLine(status)); }

void ServiceNotifier::Start(std::function<warden::Status()> live,
                            std::function<std::string()> status) {
  if (!active_ || thread_.joinable()) return;
  live_ = std::move(live);
  status_ = std::move(status);
  thread_ = std::thread([this] { Loop(); });
}

void ServiceNotifier::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ServiceNotifier::Loop() {
  // Half the watchdog's time, as sd_watchdog_enabled(3) recommends: one
  // late ping still arrives in time.
  const auto every = watchdog_.count() > 0
                         ? std::chrono::duration_cast<std::chrono::milliseconds>(watchdog_ / 2)
                         : std::chrono::milliseconds(10'000);
  bool was_live = true;
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    const warden::Status live = live_ ? live_() : warden::Status::Ok();
    const std::string status = status_ ? status_() : "";
    std::string message = status.empty() ? "" : StatusLine(status);
    if (live.ok()) {
      if (!was_live) LogOut(LogLevel::kWarn, "live again; feeding the service watchdog again");
      if (watchdog_.count() > 0) message = "WATCHDOG=1" + (message.empty() ? "" : "\n" + message);
    } else {
      // Said once: the manager will act when its watchdog runs out.
      if (was_live) {
        LogOut(LogLevel::kError, "not live (" + live.message() +
                                     "): no longer feeding the service watchdog");
      }
      message = StatusLine("not live: " + live.message());
    }
    was_live = live.ok();
    if (!message.empty()) Send(message);
    lock.lock();
    cv_.wait_for(lock, std::max(every, std::chrono::milliseconds(1)), [this] { return stop_; });
  }
}

}  // namespace warden::cli
