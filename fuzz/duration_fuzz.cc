// Durations: ParseDuration and the CLI's Duration(flag, text), which every
// duration flag (--timeout, --lease, --heartbeat, ...) goes through.
// Checks: both agree; a refusal is one InvalidArgument line; an accepted
// value is in range (at most kMaxDuration), matches a floating-point reading
// of the text (compound values included: 1h30m) within rounding, and
// FormatDuration of it reads back to the same value; and FormatDuration
// round-trips every value in range (the input's first 8 bytes as a number
// of milliseconds).
#include <cmath>
#include <cstring>
#include <optional>

#include "cli/cli.h"
#include "warden/duration.h"
#include "fuzz_check.h"

namespace warden::fuzz {
namespace {

constexpr int64_t kMaxMs = kMaxDuration.count();

void CheckFormat(Millis d) {
  const std::string text = FormatDuration(d);
  FUZZ_CHECK(text.size() <= 24 && text.find(' ') == std::string::npos, text);
  auto back = ParseDuration(text);
  FUZZ_CHECK(back.has_value(), text + " -> " + back.status().ToString());
  FUZZ_CHECK(*back == d, std::to_string(d.count()) + "ms -> " + text + " -> " +
                             std::to_string(back->count()));
  FUZZ_CHECK(FormatDuration(*back) == text, text);
}

struct Reading {
  double ms = 0;
  int parts = 0;
};

// An independent, floating-point reading: nullopt unless `text` is one or
// more digits-and-point then a known unit, units strictly largest first.
std::optional<Reading> Approximate(const std::string& text) {
  Reading r;
  double previous = 0;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find_first_not_of("0123456789.", at), text.size());
    const size_t unit_end = std::min(text.find_first_of("0123456789.", end), text.size());
    const std::string number = text.substr(at, end - at), unit = text.substr(end, unit_end - end);
    const size_t points = std::count(number.begin(), number.end(), '.');
    if (number.empty() || number == "." || points > 1) return std::nullopt;
    double scale = 0;
    if (unit == "ms") scale = 1;
    if (unit == "s") scale = 1e3;
    if (unit == "m") scale = 6e4;
    if (unit == "h") scale = 3.6e6;
    if (unit == "d") scale = 8.64e7;
    if (scale == 0 || (previous != 0 && scale >= previous)) return std::nullopt;
    previous = scale;
    r.ms += std::strtod(number.c_str(), nullptr) * scale;
    ++r.parts;
    at = unit_end;
  }
  if (r.parts == 0) return std::nullopt;
  return r;
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto d = ParseDuration(text);
  const auto flag = cli::Duration("--lease", text);
  FUZZ_CHECK(d.has_value() == flag.has_value(), text);
  const std::optional<Reading> approx = Approximate(text);
  if (!d.has_value()) {
    CheckRefusal(d.error(), 160);
    CheckRefusal(flag.error(), 180);
    FUZZ_CHECK(flag.error().message() == "--lease: " + d.error().message(),
               flag.error().message());
    // Refused only when the text is malformed or the value out of range.
    FUZZ_CHECK(!approx || approx->ms > static_cast<double>(kMaxMs) * (1 - 1e-9), text);
  } else {
    FUZZ_CHECK(*d == *flag, text);
    const int64_t ms = d->count();
    FUZZ_CHECK(ms >= 0 && ms <= kMaxMs, text);
    FUZZ_CHECK(approx.has_value(), text);
    // Each part rounds to the millisecond on its own.
    FUZZ_CHECK(std::fabs(approx->ms - static_cast<double>(ms)) <=
                   approx->parts + approx->ms * 1e-12,
               text + " -> " + std::to_string(ms));
    CheckFormat(*d);
  }
  if (size >= sizeof(uint64_t)) {
    uint64_t raw = 0;
    std::memcpy(&raw, data, sizeof raw);
    CheckFormat(Millis(static_cast<int64_t>(raw % (kMaxMs + 1))));
  }
  return 0;
}
