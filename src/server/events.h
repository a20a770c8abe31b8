// Live updates for `GET /v1/events` (Server-Sent Events): one thread per
// server looks at a cheap summary of the database (queue depths by state,
// the live workers, the newest audit entry) every `interval` while anyone
// listens, and tells every listener when it changed. A dashboard then
// fetches its page once per change instead of polling it: N open
// dashboards cost one look per interval plus the pages that did change.
// The thread never waits on a listener: each `send` only queues.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "warden/client.h"

namespace warden::server {

struct EventHubOptions {
  std::chrono::milliseconds interval{250};
  // A comment line after this much quiet: proxies keep the connection, and
  // a client gone away is found by the failed write.
  std::chrono::milliseconds ping{15'000};
};

class EventHub {
 public:
  // Queues text for one listener; false once its connection is gone.
  using Send = std::function<bool(std::string)>;

  EventHub(std::unique_ptr<Client> client, EventHubOptions options,
           std::function<void(const std::string&)> log);
  ~EventHub();  // Stop()s
  EventHub(const EventHub&) = delete;
  EventHub& operator=(const EventHub&) = delete;

  // Sends the current version at once (`event: change`), then one event
  // per change and a ping after each quiet `ping`. The listener stays
  // subscribed while the returned handle lives.
  std::shared_ptr<void> Subscribe(Send send);

  // Ends the thread: nothing is sent after it returns (call it before the
  // connections that `send` writes to go away). Idempotent.
  void Stop();

  // The SSE text of one change event.
  static std::string ChangeEvent(int64_t version, bool error);

 private:
  struct Subscriber {
    Send send;
  };
  void Run();
  // A digest of what the dashboard shows; "" with *error set when the
  // database does not answer.
  std::string Look(std::string* error);
  // Sends `text` to every live listener.
  void Broadcast(const std::string& text);

  std::unique_ptr<Client> client_;
  const EventHubOptions options_;
  std::function<void(const std::string&)> log_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::weak_ptr<Subscriber>> listeners_;  // under mu_
  int64_t version_ = 0;                             // under mu_
  bool failing_ = false;                            // under mu_
  bool stop_ = false;                               // under mu_
  std::thread thread_;
};

}  // namespace warden::server
