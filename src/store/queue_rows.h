// QueueList's answer, put together the same way by every backend from the
// rows it reads: job counts by (queue, state), the paused queues and the
// limited ones.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "warden/operator.h"

namespace warden {

class QueueRows {
 public:
  // One (queue, state) count; `oldest_available` is the least run_at of
  // the queue's available jobs, given with the available row.
  void AddCount(const std::string& queue, const std::string& state, int64_t n,
                std::optional<TimeMs> oldest_available) {
    QueueInfo& q = Named(queue);
    q.jobs.emplace_back(state, n);
    if (oldest_available) q.oldest_available_at = oldest_available;
  }
  void AddPause(const std::string& queue, TimeMs paused_at) {
    QueueInfo& q = Named(queue);
    q.paused = true;
    q.paused_at = paused_at;
  }
  void AddLimits(const std::string& queue, const QueueLimits& limits) {
    Named(queue).limits = limits;
  }
  // By name.
  std::vector<QueueInfo> Take() {
    std::vector<QueueInfo> out;
    for (auto& [name, q] : queues_) out.push_back(std::move(q));
    queues_.clear();
    return out;
  }

 private:
  QueueInfo& Named(const std::string& name) {
    QueueInfo& q = queues_[name];
    q.name = name;
    return q;
  }
  std::map<std::string, QueueInfo> queues_;
};

}  // namespace warden
