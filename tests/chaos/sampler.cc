#include "sampler.h"

#include <algorithm>
#include <memory>

#include "ledger.h"
#include "warden/client.h"

namespace chaos {

FlowSampler::FlowSampler(std::string db_url, std::string queue, std::vector<std::string> nodes)
    : db_url_(std::move(db_url)), queue_(std::move(queue)), nodes_(std::move(nodes)) {}

FlowSampler::~FlowSampler() { Stop(); }

void FlowSampler::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void FlowSampler::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void FlowSampler::Loop() {
  std::unique_ptr<warden::Client> client;
  while (!stop_) {
    if (!client) {
      auto c = warden::Client::Open(db_url_, std::chrono::milliseconds(1000));
      if (c.has_value()) client = std::move(c).value();
    }
    if (client && !nodes_.empty()) {
      auto nodes = client->ListNodes();
      if (nodes.has_value()) {
        const int64_t now = WallMs();
        for (const warden::NodeInfo& n : *nodes) {
          if (std::find(nodes_.begin(), nodes_.end(), n.name) == nodes_.end()) continue;
          node_samples_.push_back({now, n.name, n.running});
        }
      } else {
        ++node_failed_;
      }
    } else if (!nodes_.empty()) {
      ++node_failed_;
    }
    if (queue_.empty()) {
      // Nothing more to read.
    } else if (client) {
      auto flow = client->GetQueueFlow(queue_);
      if (flow.has_value() && flow->has_value()) {
        FlowSample s;
        s.ms = WallMs();
        s.running = (*flow)->running;
        for (const auto& [job, worker] : (*flow)->holders) s.jobs.push_back(job);
        samples_.push_back(std::move(s));
      } else {
        ++failed_;
      }
    } else {
      ++failed_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace chaos
