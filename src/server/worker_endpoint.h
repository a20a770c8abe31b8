// A worker's own HTTP endpoint: `warden worker --metrics-listen ADDR:PORT`
// serves GET /metrics (its process metrics, docs/metrics.md), and
// `--health-listen ADDR:PORT` serves GET /healthz (the process answers) and
// GET /readyz (registered, heartbeats written, not draining; 503 else).
// Given one address for both (not port 0), one listener serves all three.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/listener.h"
#include "warden/worker.h"

namespace warden::server {

// Starts the listeners the two flags ask for (an empty flag: none).
// The worker must outlive them.
Result<std::vector<std::unique_ptr<Listener>>> StartWorkerEndpoints(
    const std::string& metrics_listen, const std::string& health_listen, Worker& worker,
    LogLine log);

}  // namespace warden::server
