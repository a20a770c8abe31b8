// Counts in messages for people: "1 job", "2 jobs", "0 jobs". Every count a
// human message prints goes through Plural, so that none says "1 jobs".
// JSON output has numbers, not words, and does not need it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace warden {

// "N NOUN" with NOUN as is when N is 1 (or -1), else `plural`, by default
// NOUN followed by "s" (every noun warden counts: job, worker, attempt,
// write, byte, outcome, crash loop).
inline std::string Plural(int64_t n, std::string_view noun, std::string_view plural = {}) {
  std::string out = std::to_string(n) + " ";
  if (n == 1 || n == -1) return out.append(noun);
  if (!plural.empty()) return out.append(plural);
  return out.append(noun).append("s");
}

}  // namespace warden
