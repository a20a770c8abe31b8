// Durations as people write them: 250ms, 10s, 1.5m, 2h, 1d, and compound
// ones, 1h30m, 2m30s, 1d12h (bare milliseconds are refused: a unit is
// required, to avoid 10 meaning 10 ms to one reader and 10 s to another).
#pragma once

#include <string>
#include <string_view>

#include "warden/job.h"
#include "warden/status.h"

namespace warden {

// The longest duration any flag takes: 365 days. Longer is a typo (an extra
// digit, ms for s) far more often than a plan, and every sum and deadline
// computed from a duration stays far from overflow.
inline constexpr Millis kMaxDuration = std::chrono::hours(24 * 365);

// One or more parts NUMBER UNIT, units ms, s, m, h, d, each at most once and
// largest first ("1h30m"; not "30m1h", "1h1h" or "1h 30m"); a number may
// have a fraction ("1.5h", ".5m"). Decimal arithmetic, exact; each part's
// fraction of a millisecond rounds half up. Accepts 0 to kMaxDuration.
// Errors are one line that shows at most the first 40 bytes of `text`,
// non-printable bytes as '?'.
Result<Millis> ParseDuration(std::string_view text);
// "250ms", "1.5s", "2m", "1.5h": the largest of h, m, s that shows `d`
// exactly in at most three decimals, so ParseDuration reads back `d`.
std::string FormatDuration(Millis d);

// For people, not to be read back: "850ms", "4.2s", "42s", "3m5s",
// "1h30m", "2d4h" (the two largest units, cut, not rounded, past a minute).
std::string HumanDuration(Millis d);

// RFC 3339 UTC with milliseconds: 2026-11-21T21:42:50.123Z
std::string FormatTime(TimeMs t);

// An RFC 3339 time as people write it: 2026-11-26T09:00:00Z,
// 2026-11-26T10:00:00+01:00, 2026-11-26 09:00:00.250z (T or a space, any
// fraction of a second, truncated to the millisecond). The offset (Z or
// +HH:MM / -HH:MM) is required: a time without one means different
// instants on different machines. Years 0001-9999; no leap second (:60).
// Errors are one line as ParseDuration's.
Result<TimeMs> ParseTime(std::string_view text);

}  // namespace warden
