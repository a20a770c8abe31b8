// The flow sampler: on a thread of its own (a store fault that blocks a
// read must not delay a fault's timing), reads the limited queue's running
// jobs every 200 ms, as the claim counts them (Client::GetQueueFlow), so
// that the checker can hold every sampled moment to the limit (invariant
// 7) besides the attempts' intervals; and, with nodes named, their running
// jobs as the claim counts them (Client::ListNodes, what `warden nodes`
// shows), for node capacity (invariant 8). Failed reads (store outages)
// are counted and skipped.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace chaos {

struct FlowSample {
  int64_t ms = 0;  // wall ms, when the read returned
  int64_t running = 0;
  std::vector<int64_t> jobs;  // some of the running jobs (warden::kFlowHoldersShown)
};

struct NodeSample {
  int64_t ms = 0;  // wall ms, when the read returned
  std::string node;
  int64_t running = 0;
};

class FlowSampler {
 public:
  // `queue`: "" for none; `nodes`: the nodes to sample (none: no read).
  FlowSampler(std::string db_url, std::string queue, std::vector<std::string> nodes = {});
  ~FlowSampler();
  void Start();
  void Stop();
  // After Stop.
  const std::vector<FlowSample>& samples() const { return samples_; }
  int failed() const { return failed_; }
  const std::vector<NodeSample>& node_samples() const { return node_samples_; }
  int node_failed() const { return node_failed_; }

 private:
  void Loop();

  std::string db_url_, queue_;
  std::vector<std::string> nodes_;
  std::atomic<bool> stop_{false};
  std::vector<FlowSample> samples_;
  int failed_ = 0;
  std::vector<NodeSample> node_samples_;
  int node_failed_ = 0;
  std::thread thread_;
};

}  // namespace chaos
