// Flow limits as an operator writes them: `warden queues limit Q --rate
// N/INTERVAL --concurrency N` and the HTTP API's PUT /v1/queues/{q}/limits
// (ParseRate, ParseConcurrencyLimit: include/warden/flow.h).
// Checks: a refusal is one InvalidArgument line; an accepted rate has a
// count from 1 to kMaxFlowLimit and an interval from 1ms to kMaxDuration,
// is exactly what an independent reading of the text gives (digits, '/',
// then a duration that ParseDuration takes, or a unit alone for one of
// it), and FormatRate writes it back to text that reads back the same; a
// concurrency is accepted iff the text is decimal digits of a value in
// range. FormatRate round-trips every rate in range (the input's first 8
// bytes as numbers).
#include <cstring>
#include <optional>

#include "fuzz_check.h"
#include "warden/duration.h"
#include "warden/flow.h"

namespace warden::fuzz {
namespace {

// nullopt unless `text` is DIGITS/INTERVAL with a count in range and an
// interval ParseDuration reads (a unit alone: one of it) of at least 1ms.
std::optional<RateLimit> Independent(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0) return std::nullopt;
  const std::string count = text.substr(0, slash), interval = text.substr(slash + 1);
  if (count.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const size_t first = count.find_first_not_of('0');
  if (first == std::string::npos || count.size() - first > 7) return std::nullopt;
  const int64_t n = std::stoll(count.substr(first));
  if (n < 1 || n > kMaxFlowLimit) return std::nullopt;
  const bool unit_alone =
      !interval.empty() && interval.find_first_of("0123456789.") == std::string::npos;
  auto per = ParseDuration(unit_alone ? "1" + interval : interval);
  if (!per.has_value() || per->count() < 1) return std::nullopt;
  return RateLimit{n, *per};
}

void CheckFormat(const RateLimit& r) {
  const std::string text = FormatRate(r);
  auto back = ParseRate(text);
  FUZZ_CHECK(back.has_value(), text + " -> " + back.error().ToString());
  FUZZ_CHECK(*back == r, text);
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto rate = ParseRate(text);
  const std::optional<RateLimit> expected = Independent(text);
  FUZZ_CHECK(rate.has_value() == expected.has_value(), text);
  if (!rate.has_value()) {
    CheckRefusal(rate.error(), 200);
  } else {
    FUZZ_CHECK(*rate == *expected, text);
    FUZZ_CHECK(rate->count >= 1 && rate->count <= kMaxFlowLimit, text);
    FUZZ_CHECK(rate->per >= Millis(1) && rate->per <= kMaxDuration, text);
    CheckFormat(*rate);
  }

  const auto n = ParseConcurrencyLimit(text);
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (n.has_value()) {
    FUZZ_CHECK(digits && *n >= 1 && *n <= kMaxFlowLimit, text);
    FUZZ_CHECK(ParseConcurrencyLimit(std::to_string(*n)).value() == *n, text);
    FUZZ_CHECK(CheckConcurrencyLimit(*n).ok(), text);
  } else {
    CheckRefusal(n.error(), 200);
    const size_t first = text.find_first_not_of('0');
    FUZZ_CHECK(!digits || first == std::string::npos || text.size() - first > 7 ||
                   std::stoll(text.substr(first)) > kMaxFlowLimit,
               text);
  }

  if (size >= 2 * sizeof(uint32_t)) {
    uint32_t raw[2];
    std::memcpy(raw, data, sizeof raw);
    CheckFormat(RateLimit{1 + static_cast<int64_t>(raw[0] % kMaxFlowLimit),
                          Millis(1 + static_cast<int64_t>(raw[1]) % kMaxDuration.count())});
  }
  return 0;
}
