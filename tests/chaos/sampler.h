// The flow sampler: on a thread of its own (a store fault that blocks a
// read must not delay a fault's timing), reads the limited queue's running
// jobs every 200 ms, as the claim counts them (Client::GetQueueFlow), so
// that the checker can hold every sampled moment to the limit (invariant
// 7) besides the attempts' intervals. Failed reads (store outages) are
// counted and skipped.
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

class FlowSampler {
 public:
  FlowSampler(std::string db_url, std::string queue);
  ~FlowSampler();
  void Start();
  void Stop();
  // After Stop.
  const std::vector<FlowSample>& samples() const { return samples_; }
  int failed() const { return failed_; }

 private:
  void Loop();

  std::string db_url_, queue_;
  std::atomic<bool> stop_{false};
  std::vector<FlowSample> samples_;
  int failed_ = 0;
  std::thread thread_;
};

}  // namespace chaos
