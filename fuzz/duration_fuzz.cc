// Durations: ParseDuration and the CLI's Duration(flag, text), which every
// duration flag (--timeout, --lease, --heartbeat, ...) goes through.
// Checks: both agree; a refusal is one InvalidArgument line; an accepted
// value is in range, matches a floating-point reading of the text within
// rounding, and FormatDuration of it reads back to the same value; and
// FormatDuration round-trips every value in range (the input's first 8
// bytes as a number of milliseconds).
#include <cmath>
#include <cstring>
#include <limits>

#include "cli/cli.h"
#include "core/duration.h"
#include "fuzz_check.h"

namespace warden::fuzz {
namespace {

constexpr int64_t kMaxMs = std::numeric_limits<int64_t>::max() / 4;

void CheckFormat(Millis d) {
  const std::string text = FormatDuration(d);
  FUZZ_CHECK(text.size() <= 24 && text.find(' ') == std::string::npos, text);
  auto back = ParseDuration(text);
  FUZZ_CHECK(back.has_value(), text + " -> " + back.status().ToString());
  FUZZ_CHECK(*back == d, std::to_string(d.count()) + "ms -> " + text + " -> " +
                             std::to_string(back->count()));
  FUZZ_CHECK(FormatDuration(*back) == text, text);
}

// An independent, floating-point reading: nullopt if `text` is not
// digits-and-point then a known unit.
std::optional<double> Approximate(const std::string& text) {
  const size_t end = std::min(text.find_first_not_of("0123456789."), text.size());
  const std::string number = text.substr(0, end), unit = text.substr(end);
  const size_t points = std::count(number.begin(), number.end(), '.');
  if (number.empty() || number == "." || points > 1) return std::nullopt;
  double scale = 0;
  if (unit == "ms") scale = 1;
  if (unit == "s") scale = 1e3;
  if (unit == "m") scale = 6e4;
  if (unit == "h") scale = 3.6e6;
  if (unit == "d") scale = 8.64e7;
  if (scale == 0) return std::nullopt;
  return std::strtod(number.c_str(), nullptr) * scale;
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
  const std::optional<double> approx = Approximate(text);
  if (!d.has_value()) {
    CheckRefusal(d.error(), 160);
    CheckRefusal(flag.error(), 180);
    FUZZ_CHECK(flag.error().message() == "--lease: " + d.error().message(),
               flag.error().message());
    // Refused only when the text is malformed or the value out of range.
    FUZZ_CHECK(!approx || *approx > static_cast<double>(kMaxMs) * (1 - 1e-9), text);
  } else {
    FUZZ_CHECK(*d == *flag, text);
    const int64_t ms = d->count();
    FUZZ_CHECK(ms >= 0 && ms <= kMaxMs, text);
    FUZZ_CHECK(approx.has_value(), text);
    FUZZ_CHECK(std::fabs(*approx - static_cast<double>(ms)) <= 1 + *approx * 1e-12,
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
