// Log lines of a worker: one line each, timestamped, to stderr by default.
#pragma once

#include <functional>
#include <string>

namespace warden {

using LogFn = std::function<void(const std::string&)>;

// "2026-11-21T21:42:50.123Z warden[1234] <prefix>: <line>" on stderr.
LogFn StderrLog(const std::string& prefix);

}  // namespace warden
