// Durations as people write them: 250ms, 10s, 1.5m, 2h, 1d (and bare
// milliseconds are refused: a unit is required, to avoid 10 meaning 10 ms
// to one reader and 10 s to another).
#pragma once

#include <string>
#include <string_view>

#include "warden/job.h"
#include "warden/status.h"

namespace warden {

// Decimal arithmetic, exact; fractions of a millisecond round half up.
// Accepts 0 to 2^61 - 1 ms. Errors are one line that shows at most the first
// 40 bytes of `text`, non-printable bytes as '?'.
Result<Millis> ParseDuration(std::string_view text);
// "250ms", "1.5s", "2m", "1.5h": the largest of h, m, s that shows `d`
// exactly in at most three decimals, so ParseDuration reads back `d`.
std::string FormatDuration(Millis d);

// RFC 3339 UTC with milliseconds: 2026-11-21T21:42:50.123Z
std::string FormatTime(TimeMs t);

}  // namespace warden
