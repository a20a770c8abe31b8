// What the fuzz targets share: property checks that print what broke and
// abort (libFuzzer then reports a crash and saves the input), and the rules
// every error message must follow.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "warden/warden.h"

// Checks `cond`; on failure prints `detail` (a std::string) and aborts.
#define FUZZ_CHECK(cond, detail)                                                 \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "\nproperty failed at %s:%d: %s\n  %s\n", __FILE__,   \
                   __LINE__, #cond, warden::fuzz::Shown(detail).c_str());       \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

namespace warden::fuzz {

// `text` with bytes outside printable ASCII as \xNN, cut at 300 bytes.
inline std::string Shown(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 300)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    }
  }
  if (text.size() > 300) out += "...";
  return out;
}

inline bool IsOneLine(std::string_view s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

// A refusal of outside input: InvalidArgument, one short line.
inline void CheckRefusal(const Status& s, size_t max_bytes = 300) {
  FUZZ_CHECK(!s.ok(), std::string("expected an error"));
  FUZZ_CHECK(s.code() == StatusCode::kInvalidArgument, s.ToString());
  FUZZ_CHECK(!s.message().empty(), s.ToString());
  FUZZ_CHECK(IsOneLine(s.message()), s.ToString());
  FUZZ_CHECK(s.message().size() <= max_bytes, s.ToString());
}

// The pieces of `data` between NUL bytes (so n NULs give n + 1 pieces).
inline std::vector<std::string> SplitOnNul(const uint8_t* data, size_t size) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) out.emplace_back();
    else out.back() += static_cast<char>(data[i]);
  }
  return out;
}

// Nesting depth of a JSON value (a scalar is 0), without recursion.
inline int Depth(const Json& j) {
  int max = 0;
  std::vector<std::pair<const Json*, int>> todo = {{&j, 0}};
  while (!todo.empty()) {
    auto [v, d] = todo.back();
    todo.pop_back();
    if (!v->is_structured()) continue;
    max = std::max(max, d + 1);
    for (const Json& child : *v) todo.push_back({&child, d + 1});
  }
  return max;
}

}  // namespace warden::fuzz
