#include "core/duration.h"

#include <charconv>
#include <cstdio>
#include <ctime>
#include <limits>

namespace warden {

Result<Millis> ParseDuration(std::string_view text) {
  auto bad = [&](const char* why) {
    return InvalidArgument("invalid duration '" + std::string(text) + "': " + why +
                           " (examples: 250ms, 10s, 5m, 2h)");
  };
  if (text.empty()) return bad("empty");
  size_t digits = 0;
  while (digits < text.size() &&
         ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) {
    ++digits;
  }
  if (digits == 0) return bad("must start with a number");
  const std::string number(text.substr(0, digits));
  const std::string_view unit = text.substr(digits);
  double value = 0;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || ptr != number.data() + number.size()) return bad("not a number");
  double scale = 0;
  if (unit == "ms") scale = 1;
  else if (unit == "s") scale = 1000;
  else if (unit == "m") scale = 60'000;
  else if (unit == "h") scale = 3'600'000;
  else if (unit == "d") scale = 86'400'000;
  else if (unit.empty()) return bad("missing unit");
  else return bad("unknown unit");
  const double ms = value * scale;
  if (ms > static_cast<double>(std::numeric_limits<int64_t>::max() / 4)) return bad("too large");
  return Millis(static_cast<int64_t>(ms + 0.5));
}

std::string FormatDuration(Millis d) {
  const int64_t ms = d.count();
  char buf[64];
  if (ms < 1000) std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(ms));
  else if (ms < 60'000) std::snprintf(buf, sizeof buf, "%.3gs", ms / 1000.0);
  else if (ms < 3'600'000) std::snprintf(buf, sizeof buf, "%.3gm", ms / 60'000.0);
  else std::snprintf(buf, sizeof buf, "%.3gh", ms / 3'600'000.0);
  return buf;
}

std::string FormatTime(TimeMs t) {
  const time_t secs = static_cast<time_t>(t / 1000 - (t % 1000 < 0 ? 1 : 0));
  const int ms = static_cast<int>(((t % 1000) + 1000) % 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

}  // namespace warden
