#include "sim_run.h"

#include <fmt/format.h>

namespace warden::sim {

RunResult RunSeed(const RunOptions& options) {
  World world(options);
  return world.Run();
}

std::string FailureReport(const std::string& binary, const RunOptions& options,
                          const RunResult& result) {
  return fmt::format("seed {} broke an invariant at {:.3f}s: {}\nreproduce: {}\n", options.seed,
                     static_cast<double>(result.at) / 1e6, result.violation,
                     ReproCommand(binary, options));
}

}  // namespace warden::sim
