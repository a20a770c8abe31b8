// One claimed job on a worker, from its claim to its recorded outcome:
// what the claim loop queues, a slot runs, the heartbeat confirms and the
// watchdog fences.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "warden/job.h"
#include "env/stop_signal.h"

namespace warden {

// One claimed job on this worker, from claim to recorded outcome.
struct RunningJob {
  JobInfo job;
  Millis lease{0};
  WorkerId worker = 0;           // the registration it was claimed under
  int64_t claim_start_mono = 0;  // before the claim statement was sent
  // Start of the last heartbeat whose reply listed this job with its token:
  // the store extended the lease at a time no earlier than that. Only such
  // a heartbeat counts; one that did not cover the job (its claim reply came
  // late, or the worker registered again meanwhile) proves nothing about it.
  std::atomic<int64_t> confirmed_mono{0};
  std::atomic<int64_t> started_mono{0};  // 0 until a slot starts it
  std::atomic<bool> timed_out{false};    // in-process handlers only
  std::atomic<bool> finished{false};     // ran; its outcome is being recorded
  StopSignal stop;

  // What self-fencing measures from: the last time the store is known to
  // have extended this job's lease.
  int64_t lease_base_mono() const { return std::max(claim_start_mono, confirmed_mono.load()); }
};

}  // namespace warden
