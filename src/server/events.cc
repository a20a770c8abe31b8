#include "server/events.h"

#include <algorithm>

#include "warden/job.h"

namespace warden::server {

EventHub::EventHub(std::unique_ptr<Client> client, EventHubOptions options,
                   std::function<void(const std::string&)> log)
    : client_(std::move(client)), options_(options), log_(std::move(log)) {
  thread_ = std::thread([this] { Run(); });
}

EventHub::~EventHub() { Stop(); }

void EventHub::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string EventHub::ChangeEvent(int64_t version, bool error) {
  // `version` only says "something changed": a client fetches what it shows.
  // `error`: the database did not answer the last look (a page would not
  // load either); the next answer is a change.
  return "event: change\ndata: " +
         Json{{"version", version}, {"database_error", error}}.dump() + "\n\n";
}

std::shared_ptr<void> EventHub::Subscribe(Send send) {
  auto listener = std::make_shared<Subscriber>(Subscriber{std::move(send)});
  int64_t version;
  bool failing;
  {
    std::lock_guard lock(mu_);
    listeners_.push_back(listener);
    version = version_;
    failing = failing_;
  }
  cv_.notify_all();  // the thread sleeps while nobody listens
  listener->send("retry: 1000\n" + ChangeEvent(version, failing));
  return listener;
}

std::string EventHub::Look(std::string* error) {
  auto queues = client_->ListQueues();
  if (!queues.has_value()) {
    *error = queues.error().ToString();
    return "";
  }
  auto workers = client_->ListWorkers(/*live_only=*/true);
  if (!workers.has_value()) {
    *error = workers.error().ToString();
    return "";
  }
  auto audit = client_->ListAudit(1);
  if (!audit.has_value()) {
    *error = audit.error().ToString();
    return "";
  }
  // What a page shows that can change, and nothing that changes by itself
  // (ages, heartbeats): those a page works out from the times it fetched.
  Json digest = Json::array();
  for (const QueueInfo& q : *queues) {
    digest.push_back({q.name, q.paused, q.jobs, q.oldest_available_at.value_or(0),
                      q.live_workers});
  }
  for (const WorkerInfo& w : *workers) {
    // Silent or not (past its keepalive) and its node's word change what a
    // page shows of it, not its age.
    digest.push_back({w.id, WorkerStateName(w.state), w.running, w.silent_for.has_value(),
                      w.node_disabled});
  }
  digest.push_back(audit->empty() ? 0 : audit->front().id);
  return digest.dump();
}

void EventHub::Broadcast(const std::string& text) {
  std::vector<std::shared_ptr<Subscriber>> live;
  {
    std::lock_guard lock(mu_);
    for (const auto& weak : listeners_) {
      if (auto l = weak.lock()) live.push_back(std::move(l));
    }
  }
  for (const auto& l : live) l->send(text);  // Run forgets the gone ones
}

void EventHub::Run() {
  std::string last;
  auto quiet_since = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  while (!stop_) {
    listeners_.erase(std::remove_if(listeners_.begin(), listeners_.end(),
                                    [](const auto& weak) { return weak.expired(); }),
                     listeners_.end());
    if (listeners_.empty()) {
      // Nobody listens: look at nothing. The next listener gets the version
      // as it stands, and the first look after it sends a change if the
      // database moved meanwhile.
      cv_.wait(lock, [this] { return stop_ || !listeners_.empty(); });
      continue;
    }
    lock.unlock();
    std::string error;
    const std::string now = Look(&error);
    const auto at = std::chrono::steady_clock::now();
    std::string event;
    lock.lock();
    const bool failed = !error.empty();
    if (failed != failing_ || (!failed && now != last)) {
      if (failed && !failing_) log_("live updates: " + error + " (looking again)");
      failing_ = failed;
      if (!failed) last = now;
      event = ChangeEvent(++version_, failed);
    } else if (at - quiet_since >= options_.ping) {
      event = ": ping\n\n";
    }
    lock.unlock();
    if (!event.empty()) {
      Broadcast(event);
      quiet_since = at;
    }
    lock.lock();
    cv_.wait_for(lock, options_.interval, [this] { return stop_; });
  }
}

}  // namespace warden::server
