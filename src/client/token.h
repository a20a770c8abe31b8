// API tokens: `wdn_<id>_<secret>`, where the secret is 32 random bytes in
// hex. The store keeps only the secret's SHA-256; a request's token is
// found by its id and its hash compared in constant time, so neither a
// lookup nor a comparison times out a guess byte by byte.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "warden/status.h"

namespace warden::token {

Result<std::string> NewSecret();
std::string Format(int64_t id, const std::string& secret);

struct Parsed {
  int64_t id = 0;
  std::string secret;
};
// nullopt: not a token's shape (the message says no more, on purpose).
std::optional<Parsed> Parse(std::string_view text);

std::string Hash(std::string_view secret);  // SHA-256, hex
bool SameHash(std::string_view a, std::string_view b);

}  // namespace warden::token
