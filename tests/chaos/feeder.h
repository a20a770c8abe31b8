// The feeder: enqueues the workload over the fault window on a thread of
// its own (so a store fault that blocks an enqueue never delays a fault's
// timing), retrying through store outages.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "workload.h"

namespace chaos {

class Feeder {
 public:
  using SayFn = std::function<void(const std::string&)>;
  Feeder(std::string db_url, const std::vector<PlannedJob>& jobs, SayFn say);
  ~Feeder();
  // Enqueues job i at window_start + jobs[i].enqueue_at_ms (wall ms).
  void Start(int64_t window_start);
  // Waits until everything is enqueued (or `give_up` passes, wall ms).
  void Join(int64_t give_up);

  // After Join: the id each job got (0: never acknowledged).
  const std::vector<int64_t>& ids() const { return ids_; }
  int enqueued() const { return enqueued_; }
  // Jobs whose retried enqueue found them already stored (the first
  // attempt committed but its answer was lost).
  int recognised() const { return recognised_; }
  int failed_attempts() const { return failed_attempts_; }

 private:
  void Loop(int64_t window_start);

  std::string db_url_;
  const std::vector<PlannedJob>& jobs_;
  SayFn say_;
  std::vector<int64_t> ids_;
  std::atomic<int> enqueued_{0};
  std::atomic<bool> give_up_{false};
  int recognised_ = 0, failed_attempts_ = 0;
  std::thread thread_;
};

}  // namespace chaos
