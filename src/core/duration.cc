#include "warden/duration.h"

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

// Days from 1970-01-01 to the civil date y-m-d (proleptic Gregorian; H.
// Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int DaysInMonth(int64_t y, int64_t m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
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
      return bad("units must go largest first, each once");
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

std::string HumanDuration(Millis d) {
  const int64_t ms = std::max<int64_t>(0, d.count());
  if (ms < 1000) return std::to_string(ms) + "ms";
  if (ms < 10'000) return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + "s";
  const int64_t s = ms / 1000;
  // The two largest units, the second left out when zero.
  auto two = [](int64_t big, const char* big_unit, int64_t small, const char* small_unit) {
    std::string out = std::to_string(big) + big_unit;
    if (small) out += std::to_string(small) + small_unit;
    return out;
  };
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return two(s / 60, "m", s % 60, "s");
  if (s < 86'400) return two(s / 3600, "h", s % 3600 / 60, "m");
  return two(s / 86'400, "d", s % 86'400 / 3600, "h");
}

Result<TimeMs> ParseTime(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("invalid time '" + Shown(text) + "': " + why +
                           " (examples: 2026-11-26T09:00:00Z, 2026-11-26T10:00:00+01:00)");
  };
  size_t at = 0;
  // `n` digits at `at`, as a number; -1 if not there.
  auto digits = [&](size_t n) -> int64_t {
    if (at + n > text.size()) return -1;
    int64_t v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return -1;
      v = v * 10 + (text[i] - '0');
    }
    at += n;
    return v;
  };
  auto sep = [&](const char* any) {
    if (at < text.size() && std::string_view(any).find(text[at]) != std::string_view::npos) {
      ++at;
      return true;
    }
    return false;
  };
  if (text.empty()) return bad("empty");
  const int64_t year = digits(4);
  if (year < 0 || !sep("-")) return bad("not a date: want YYYY-MM-DD");
  const int64_t month = digits(2);
  if (month < 0 || !sep("-")) return bad("not a date: want YYYY-MM-DD");
  const int64_t day = digits(2);
  if (day < 0) return bad("not a date: want YYYY-MM-DD");
  if (year < 1) return bad("year 0000 is out of range");
  if (month < 1 || month > 12) return bad("month " + std::to_string(month) + " does not exist");
  if (day < 1 || day > DaysInMonth(year, month)) {
    return bad("day " + std::to_string(day) + " does not exist in that month");
  }
  if (at == text.size()) return bad("missing the time of day: want THH:MM:SS and an offset");
  if (!sep("Tt ")) return bad("want T between the date and the time of day");
  const int64_t hour = digits(2);
  if (hour < 0 || !sep(":")) return bad("not a time of day: want HH:MM:SS");
  const int64_t minute = digits(2);
  if (minute < 0 || !sep(":")) return bad("not a time of day: want HH:MM:SS");
  const int64_t second = digits(2);
  if (second < 0) return bad("not a time of day: want HH:MM:SS");
  if (hour > 23 || minute > 59 || second > 59) return bad("no such time of day");
  int64_t ms = 0;
  if (sep(".")) {
    const size_t first = at;
    for (int scale = 100; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at) {
      ms += (text[at] - '0') * scale;  // truncated: digits past the third add 0
      scale /= 10;
    }
    if (at == first) return bad("want digits after the decimal point");
  }
  int64_t offset_min = 0;
  if (at == text.size()) return bad("missing the offset: end with Z (UTC) or +HH:MM");
  if (!sep("Zz")) {
    const bool minus = text[at] == '-';
    if (!sep("+-")) return bad("want Z or an offset +HH:MM / -HH:MM after the time");
    const int64_t oh = digits(2);
    if (oh < 0 || !sep(":")) return bad("not an offset: want +HH:MM or -HH:MM");
    const int64_t om = digits(2);
    if (om < 0) return bad("not an offset: want +HH:MM or -HH:MM");
    if (oh > 23 || om > 59) return bad("no such offset");
    offset_min = (minus ? -1 : 1) * (oh * 60 + om);
  }
  if (at != text.size()) return bad("unexpected text after the time");
  const int64_t secs = DaysFromCivil(year, month, day) * 86'400 + hour * 3'600 + minute * 60 +
                       second - offset_min * 60;
  return secs * 1000 + ms;
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
