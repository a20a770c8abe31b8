#include "feeder.h"

#include <algorithm>
#include <memory>
#include <numeric>

#include "ledger.h"
#include "warden/client.h"

namespace chaos {

Feeder::Feeder(std::string db_url, const std::vector<PlannedJob>& jobs,
               SayFn say)
    : db_url_(std::move(db_url)),
      jobs_(jobs),
      say_(std::move(say)),
      ids_(jobs.size(), 0) {}

Feeder::~Feeder() {
  give_up_ = true;
  if (thread_.joinable()) thread_.join();
}

void Feeder::Start(int64_t window_start) {
  thread_ = std::thread([this, window_start] { Loop(window_start); });
}

void Feeder::Join(int64_t give_up) {
  while (enqueued_ < static_cast<int>(jobs_.size()) && WallMs() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  give_up_ = true;
  if (thread_.joinable()) thread_.join();
}

void Feeder::Loop(int64_t window_start) {
  std::vector<size_t> order(jobs_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return jobs_[a].enqueue_at_ms < jobs_[b].enqueue_at_ms;
  });
  std::unique_ptr<warden::Client> client;
  bool failing = false;
  size_t next = 0;
  while (next < order.size() && !give_up_) {
    const int64_t now = WallMs();
    std::vector<size_t> batch;
    for (size_t i = next; i < order.size() && batch.size() < 500; ++i) {
      if (window_start + jobs_[order[i]].enqueue_at_ms > now) break;
      batch.push_back(order[i]);
    }
    if (batch.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    std::vector<warden::JobSpec> specs;
    for (size_t i : batch) specs.push_back(jobs_[i].spec);
    warden::Status error;
    if (!client) {
      auto c = warden::Client::Open(db_url_, std::chrono::milliseconds(1000));
      if (c.has_value()) {
        client = std::move(c).value();
      } else {
        error = c.error();
      }
    }
    if (client) {
      auto r = client->EnqueueMany(specs);
      if (r.has_value()) {
        for (size_t k = 0; k < batch.size(); ++k) {
          ids_[batch[k]] = (*r)[k].id;
          if (!(*r)[k].created) ++recognised_;
        }
        next += batch.size();
        enqueued_ += static_cast<int>(batch.size());
        if (failing) say_("feeder: enqueues work again");
        failing = false;
        continue;
      }
      error = r.error();
    }
    ++failed_attempts_;
    if (!failing) say_("feeder: enqueue failed, retrying: " + error.ToString());
    failing = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace chaos
