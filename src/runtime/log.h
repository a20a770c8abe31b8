// Log lines of a worker: one line each, timestamped, to stderr by default,
// as text or JSON (warden/log.h).
#pragma once

#include <functional>
#include <string>

#include "warden/log.h"

namespace warden {

using LogFn = std::function<void(const LogRecord&)>;

// On stderr, one write(2) per line. Text: "2026-11-21T21:42:50.123Z
// warden[1234] worker <name>: <message>" (the level and job are not
// shown: the message says them). JSON: warden/log.h's line, with "worker"
// and, once `worker_id()` is not 0, "worker_id".
LogFn StderrLog(LogFormat format, const std::string& worker_name,
                std::function<int64_t()> worker_id);

}  // namespace warden
