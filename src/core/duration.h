// Durations as people write them: 250ms, 10s, 5m, 2h, 1d (and bare
// milliseconds are refused: a unit is required, to avoid 10 meaning 10 ms
// to one reader and 10 s to another).
#pragma once

#include <string>
#include <string_view>

#include "warden/job.h"
#include "warden/status.h"

namespace warden {

Result<Millis> ParseDuration(std::string_view text);
std::string FormatDuration(Millis d);  // "1.5s", "250ms", "2m"

// RFC 3339 UTC with milliseconds: 2026-11-21T21:42:50.123Z
std::string FormatTime(TimeMs t);

}  // namespace warden
