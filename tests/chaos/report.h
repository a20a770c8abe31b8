// The summary a chaos run ends with: jobs by final state, faults by kind,
// recovery-time percentiles against their bounds, every invariant with the
// offending jobs, and the seed with the command that reruns the run.
#pragma once

#include <string>
#include <vector>

#include "checker.h"
#include "injector.h"
#include "options.h"

namespace chaos {

struct RunFacts {
  std::string backend;  // "sqlite", "postgres"
  std::string run_dir;
  double window_s = 0, drain_s = 0, total_s = 0;
  int feeder_recognised = 0, feeder_failed = 0;
  int startup_failures =
      0;  // workers that exited at start-up, store unavailable
  int64_t fenced_writes = 0, rescued = 0;
};

void PrintReport(const Options& o, const RunFacts& facts,
                 const std::vector<FaultRecord>& faults,
                 const CheckResult& result);

}  // namespace chaos
