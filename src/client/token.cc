#include "client/token.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <charconv>

namespace warden::token {
namespace {

constexpr std::string_view kPrefix = "wdn_";
constexpr size_t kSecretBytes = 32;

std::string Hex(const unsigned char* bytes, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 0xf];
  }
  return out;
}

}  // namespace

Result<std::string> NewSecret() {
  unsigned char bytes[kSecretBytes];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    return Internal("no randomness for a token (OpenSSL RAND_bytes failed)");
  }
  return Hex(bytes, sizeof bytes);
}

std::string Format(int64_t id, const std::string& secret) {
  std::string out(kPrefix);
  out += std::to_string(id);
  out += '_';
  out += secret;
  return out;
}

std::optional<Parsed> Parse(std::string_view text) {
  if (text.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  text.remove_prefix(kPrefix.size());
  const size_t sep = text.find('_');
  // One spelling per token: no leading zero (fuzz/request_target).
  if (sep == std::string_view::npos || sep == 0 || sep > 18 || text[0] == '0') return std::nullopt;
  Parsed p;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + sep, p.id);
  if (ec != std::errc() || end != text.data() + sep || p.id <= 0) return std::nullopt;
  const std::string_view secret = text.substr(sep + 1);
  if (secret.size() != 2 * kSecretBytes ||
      secret.find_first_not_of("0123456789abcdef") != std::string_view::npos) {
    return std::nullopt;
  }
  p.secret = std::string(secret);
  return p;
}

std::string Hash(std::string_view secret) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), digest);
  return Hex(digest, sizeof digest);
}

bool SameHash(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace warden::token
