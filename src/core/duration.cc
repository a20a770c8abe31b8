#include "core/duration.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace warden {
namespace {

int64_t UnitMs(std::string_view unit) {
  if (unit == "ms") return 1;
  if (unit == "s") return 1000;
  if (unit == "m") return 60'000;
  if (unit == "h") return 3'600'000;
  if (unit == "d") return 86'400'000;
  return 0;
}

// `text` fit for a one-line message: printable ASCII, at most 40 bytes.
std::string Shown(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > 40) out += "...";
  return out;
}

// round(0.`digits` * scale), half up, by schoolbook multiplication from the
// last digit: the carry out of the first digit is the integer part.
int64_t RoundedFraction(std::string_view digits, int64_t scale) {
  int64_t carry = 0;
  char first = '0';
  for (size_t i = digits.size(); i-- > 0;) {
    const int64_t v = (digits[i] - '0') * scale + carry;
    first = static_cast<char>('0' + v % 10);
    carry = v / 10;
  }
  return carry + (first >= '5' ? 1 : 0);
}

}  // namespace

Result<Millis> ParseDuration(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("invalid duration '" + Shown(text) + "': " + why +
                           " (examples: 250ms, 10s, 5m, 2h, 1h30m)");
  };
  if (text.empty()) return bad("empty");
  int64_t total = 0;
  int64_t previous_scale = 0;  // of the part before: each next one is smaller
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t end = std::min(rest.find_first_not_of("0123456789."), rest.size());
    if (end == 0) return bad("must start with a number");
    const std::string_view number = rest.substr(0, end);
    const size_t point = std::min(number.find('.'), number.size());
    const std::string_view whole = number.substr(0, point);
    const std::string_view frac = number.substr(std::min(point + 1, number.size()));
    if (number == "." || frac.find('.') != std::string_view::npos) return bad("not a number");
    rest.remove_prefix(end);
    const std::string_view unit = rest.substr(0, rest.find_first_of("0123456789."));
    rest.remove_prefix(unit.size());
    const int64_t scale = UnitMs(unit);
    if (scale == 0) return bad(unit.empty() ? "missing unit" : "unknown unit");
    if (previous_scale != 0 && scale >= previous_scale) {
      return bad("units go largest first, each at most once (1h30m, not 30m1h)");
    }
    previous_scale = scale;
    // Every part, and the sum, at most kMaxDuration: no step can overflow.
    const int64_t limit = kMaxDuration.count();
    int64_t count = 0;
    for (const char c : whole) {
      count = count * 10 + (c - '0');
      if (count > limit / scale) return bad("longer than the limit, 365d");
    }
    total += count * scale + RoundedFraction(frac, scale);
    if (total > limit) return bad("longer than the limit, 365d");
  }
  return Millis(total);
}

std::string FormatDuration(Millis d) {
  const int64_t ms = d.count();
  const uint64_t abs = ms < 0 ? 0 - static_cast<uint64_t>(ms) : static_cast<uint64_t>(ms);
  const std::string sign = ms < 0 ? "-" : "";
  if (abs < 1000) return sign + std::to_string(abs) + "ms";
  static constexpr struct {
    uint64_t ms;
    const char* name;
  } kUnits[] = {{3'600'000, "h"}, {60'000, "m"}, {1000, "s"}};
  for (const auto& u : kUnits) {
    const uint64_t rem = abs % u.ms;
    if (abs < u.ms || rem * 1000 % u.ms != 0) continue;  // seconds always fit
    std::string out = sign + std::to_string(abs / u.ms);
    if (rem != 0) {
      std::string frac = std::to_string(1000 + rem * 1000 / u.ms).substr(1);
      frac.erase(frac.find_last_not_of('0') + 1);
      out += "." + frac;
    }
    return out + u.name;
  }
  return sign + std::to_string(abs) + "ms";  // not reached
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
