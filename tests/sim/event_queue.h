// EventQueue: the simulation's scheduler. Events run in (time, sequence)
// order; the sequence number breaks ties by posting order, so a run is a
// pure function of its seed. Each event belongs to an owner (a worker
// process, its job processes, or the world/store): the world decides
// whether an owner's event runs now, waits for its process to thaw, or is
// dropped with it.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "scenario.h"

namespace warden::sim {

inline constexpr int kWorldOwner = -1;
// The job processes of worker process `process`: they run on while the
// worker alone is stopped, and stop with its host.
inline constexpr int JobsOwner(int process) { return -2 - process; }
inline constexpr int ProcessOfJobsOwner(int owner) { return -2 - owner; }

struct Event {
  SimUs at = 0;
  uint64_t seq = 0;
  int owner = kWorldOwner;
  std::function<void()> fn;
};

class EventQueue {
 public:
  void Post(SimUs at, int owner, std::function<void()> fn) {
    heap_.push(Event{at, next_seq_++, owner, std::move(fn)});
  }
  bool empty() const { return heap_.empty(); }
  SimUs next_at() const { return heap_.top().at; }
  Event Pop() {
    // priority_queue::top is const: move out through a cast, then pop; the
    // moved-from element is only destroyed by pop.
    Event e = std::move(const_cast<Event&>(heap_.top()));
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace warden::sim
