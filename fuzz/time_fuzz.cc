// Times: ParseTime, which reads `warden add --at TIME` (RFC 3339).
// Checks: a refusal is one InvalidArgument line; for short inputs, an
// independent reading (a regular expression for the shape, timegm for the
// instant) accepts exactly what ParseTime accepts, at the same instant; and
// FormatTime of any instant of years 0001-9999 (the input's first 8 bytes)
// reads back exactly.
#include <ctime>
#include <cstring>
#include <optional>
#include <regex>

#include "warden/duration.h"
#include "fuzz_check.h"

namespace warden::fuzz {
namespace {

constexpr TimeMs kFirst = -62'135'596'800'000;  // 0001-01-01T00:00:00Z
constexpr TimeMs kLast = 253'402'300'799'999;   // 9999-12-31T23:59:59.999Z

// nullopt: not a valid RFC 3339 time with an offset (as ParseTime reads it).
std::optional<TimeMs> Independent(const std::string& text) {
  static const std::regex shape(
      "([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\\.[0-9]+)?"
      "([Zz]|([+-])([0-9]{2}):([0-9]{2}))");
  std::smatch m;
  if (!std::regex_match(text, m, shape)) return std::nullopt;
  auto n = [&](int i) { return std::stoi(m[i].str()); };
  const int year = n(1), month = n(2), day = n(3);
  if (year < 1 || month < 1 || month > 12 || day < 1) return std::nullopt;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return std::nullopt;
  if (n(4) > 23 || n(5) > 59 || n(6) > 59) return std::nullopt;
  int offset = 0;
  if (m[9].matched) {
    if (n(10) > 23 || n(11) > 59) return std::nullopt;
    offset = (m[9].str() == "-" ? -1 : 1) * (n(10) * 60 + n(11));
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = n(4);
  tm.tm_min = n(5);
  tm.tm_sec = n(6);
  const int64_t secs = static_cast<int64_t>(timegm(&tm)) - offset * 60;
  const std::string frac = m[7].matched ? (m[7].str().substr(1) + "00").substr(0, 3) : "0";
  return secs * 1000 + std::stoi(frac);
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto t = ParseTime(text);
  if (!t.has_value()) CheckRefusal(t.error(), 200);
  if (size <= 64) {  // std::regex recurses per character
    const std::optional<TimeMs> expected = Independent(text);
    FUZZ_CHECK(t.has_value() == expected.has_value(), text);
    if (expected) FUZZ_CHECK(*t == *expected, text + " -> " + std::to_string(*t));
  }
  if (size >= sizeof(uint64_t)) {
    uint64_t raw = 0;
    std::memcpy(&raw, data, sizeof raw);
    const TimeMs at = kFirst + static_cast<TimeMs>(raw % static_cast<uint64_t>(kLast - kFirst + 1));
    const std::string shown = FormatTime(at);
    const auto back = ParseTime(shown);
    FUZZ_CHECK(back.has_value(), shown + " -> " + back.status().ToString());
    FUZZ_CHECK(*back == at, std::to_string(at) + " -> " + shown);
  }
  return 0;
}
