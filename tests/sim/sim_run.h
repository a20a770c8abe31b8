// Running the simulation: one seed, and the report of a failed one.
#pragma once

#include <cstdint>
#include <string>

#include "sim_options.h"
#include "sim_world.h"

namespace warden::sim {

RunResult RunSeed(const RunOptions& options);

// A report for a failed run: the violation, and the one command that
// reproduces it (with a step-by-step trace).
std::string FailureReport(const std::string& binary, const RunOptions& options,
                          const RunResult& result);

}  // namespace warden::sim
