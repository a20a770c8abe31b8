// What a worker is built on, for tests and the simulation. Worker::Create
// builds on the operating system (DefaultEnv) and opens its stores with
// OpenStore(url); CreateWorker takes both from its caller: the simulation's
// Env and in-memory store, or a FaultEnv that makes chosen calls fail.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "env/env.h"
#include "store/store.h"
#include "warden/worker.h"

namespace warden {

struct WorkerSeams {
  Env* env = nullptr;  // default: DefaultEnv()
  // Opens one of the worker's connections (it opens four, so that claims,
  // heartbeats, sweeps and completions never wait for each other); each
  // call a new one. Default: OpenStore(url).
  std::function<Result<std::unique_ptr<Store>>()> open_store;
};

// Worker::Create on these seams. `url` names the database in log lines.
Result<std::unique_ptr<Worker>> CreateWorker(const std::string& url, WorkerOptions options,
                                             WorkerSeams seams);

}  // namespace warden
