// The worker process warden_bench starts for its scenarios (`warden_bench
// worker ...`): a fresh process, so its peak RSS is its own.
#pragma once

#include "bench_util.h"

namespace bench {

// Options: --db URL --concurrency N --stop-after N [--latency].
int RunBenchWorker(const Args& args);

}  // namespace bench
