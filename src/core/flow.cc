#include "warden/flow.h"

#include <cstdint>

#include "core/flow.h"
#include "warden/duration.h"
#include "warden/text.h"

namespace warden {

Result<RateLimit> ParseRate(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("invalid rate '" + OneLine(text, 40) + "': " + why +
                           " (examples: 10/1s, 100/m, 5000/1h)");
  };
  if (text.empty()) return bad("empty");
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return bad("want N/INTERVAL");
  const std::string_view count = text.substr(0, slash);
  const std::string_view interval = text.substr(slash + 1);
  if (count.empty() || count.find_first_not_of("0123456789") != std::string_view::npos) {
    return bad("the count must be a whole number from 1 to " + std::to_string(kMaxFlowLimit));
  }
  int64_t n = 0;
  for (const char c : count) {
    n = n * 10 + (c - '0');
    if (n > kMaxFlowLimit) break;
  }
  if (n < 1 || n > kMaxFlowLimit) {
    return bad("the count must be a whole number from 1 to " + std::to_string(kMaxFlowLimit));
  }
  if (interval.empty()) return bad("missing the interval after '/'");
  const bool unit_alone = interval.find_first_of("0123456789.") == std::string_view::npos;
  std::string duration;  // (appended, not "1" + text: a false -Wrestrict in g++ 12)
  if (unit_alone) duration.push_back('1');
  duration.append(interval);
  auto per = ParseDuration(duration);
  if (!per.has_value()) {
    return bad("the interval is not a duration from 1ms to 365d, such as 1s, 500ms or 1m");
  }
  if (per->count() < 1) return bad("the interval must be at least 1ms");
  return RateLimit{n, *per};
}

std::string FormatRate(const RateLimit& rate) {
  return std::to_string(rate.count) + "/" + FormatDuration(rate.per);
}

Status CheckConcurrencyLimit(int64_t n) {
  if (n < 1 || n > kMaxFlowLimit) {
    return InvalidArgument("a concurrency limit must be from 1 to " +
                           std::to_string(kMaxFlowLimit) + " (to stop a queue, pause it)");
  }
  return Status::Ok();
}

Result<int64_t> ParseConcurrencyLimit(std::string_view text) {
  const size_t digits = text.find_first_not_of('0');
  bool ok = !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos &&
            digits != std::string_view::npos && text.size() - digits <= 7;
  int64_t n = 0;
  if (ok) {
    for (const char c : text.substr(digits)) n = n * 10 + (c - '0');
    ok = n >= 1 && n <= kMaxFlowLimit;
  }
  if (!ok) {
    return InvalidArgument("invalid concurrency limit '" + OneLine(text, 40) +
                           "': want a whole number from 1 to " + std::to_string(kMaxFlowLimit) +
                           " (to stop a queue, pause it)");
  }
  return n;
}

std::string DescribeLimits(const QueueLimits& limits) {
  std::string out;
  if (limits.concurrency) out = "concurrency " + std::to_string(*limits.concurrency);
  if (limits.rate) out += (out.empty() ? "rate " : ", rate ") + FormatRate(*limits.rate);
  return out.empty() ? "none" : out;
}

int64_t ClaimsAllowed(const QueueLimits& limits, int64_t running, int64_t recent_starts) {
  int64_t allowed = INT64_MAX;
  if (limits.concurrency) allowed = std::min(allowed, *limits.concurrency - running);
  if (limits.rate) allowed = std::min(allowed, limits.rate->count - recent_starts);
  return std::max<int64_t>(0, allowed);
}

std::optional<TimeMs> NextStartAt(const RateLimit& rate, std::span<const StartCount> window) {
  // Oldest first: the claim that, once INTERVAL old, leaves count - 1 in
  // the window.
  int64_t total = 0;
  for (const StartCount& s : window) total += s.n;
  int64_t over = total - rate.count;  // claims to age out before one more fits
  if (over < 0) return std::nullopt;
  for (const StartCount& s : window) {
    over -= s.n;
    if (over < 0) return s.at + rate.per.count();
  }
  return std::nullopt;  // not reached
}

}  // namespace warden
