// What `warden serve` reads from a request before any handler: the
// request target (SplitTarget, PercentDecode), the Host header
// (ParseHostHeader, CheckHost), the bearer token (token::Parse) and the
// body's framing (CheckFraming).
// Checks: nothing crashes; what is accepted is UTF-8 without NUL, with a
// path that starts with '/' and named parameters; a path and parameters
// built from the input and percent-encoded come back exactly; a Host is
// accepted only as a lower-case name or IP literal, and answered only when
// it is an IP literal, localhost or an allowed name; a token parses only
// in its one shape, and then formats back to the same text; each path
// segment, encoded, comes back as one segment whatever it holds ('/', "..");
// a framing is accepted only as one `chunked` without Content-Length; an
// ADDR:PORT (ParseListen) only as an IP literal or localhost and a port.
#include <arpa/inet.h>

#include <cctype>

#include "client/token.h"
#include "fuzz_check.h"
#include "server/framing.h"
#include "server/host_check.h"
#include "server/listen_addr.h"
#include "server/url.h"
#include "warden/text.h"

namespace warden::fuzz {
namespace {

bool Clean(const std::string& s) {
  return s.find('\0') == std::string::npos && InvalidUtf8At(s) == std::string::npos;
}

std::string Encode(const std::string& s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

// input = path \x01 name \x01 value: encoded into a target, it must split
// back into exactly those (when each is text a request could mean).
void CheckRoundTrip(const std::string& input) {
  const size_t a = input.find('\x01');
  const size_t b = a == std::string::npos ? a : input.find('\x01', a + 1);
  if (b == std::string::npos) return;
  const std::string path = "/" + input.substr(0, a);
  const std::string name = input.substr(a + 1, b - a - 1);
  const std::string value = input.substr(b + 1);
  if (!Clean(path) || !Clean(name) || !Clean(value) || name.empty()) return;
  std::string encoded_path;
  for (const char c : path) encoded_path += c == '/' ? std::string("/") : Encode(std::string(1, c));
  const std::string target = encoded_path + "?" + Encode(name) + "=" + Encode(value);
  if (target.size() > 8 * 1024) return;
  std::string got_path;
  std::vector<std::pair<std::string, std::string>> got_query;
  std::vector<std::string> got_segments;
  const Status s = server::SplitTarget(target, &got_path, &got_query, &got_segments);
  FUZZ_CHECK(s.ok(), target + ": " + s.ToString());
  FUZZ_CHECK(got_path == path, target + " -> " + got_path);
  // The value, '/' and all, as one segment of a path: it comes back whole.
  if (!value.empty()) {
    std::vector<std::string> segments;
    std::vector<std::pair<std::string, std::string>> no_query;
    const std::string one = "/v1/" + Encode(value) + "/x";
    if (one.size() <= 8 * 1024) {
      FUZZ_CHECK(server::SplitTarget(one, &got_path, &no_query, &segments).ok(), one);
      FUZZ_CHECK((segments == std::vector<std::string>{"v1", value, "x"}), one);
    }
  }
  FUZZ_CHECK(got_query.size() == 1 && got_query[0].first == name &&
                 got_query[0].second == value,
             target);
}

void CheckHostHeader(const std::string& text) {
  const auto host = server::ParseHostHeader(text);
  const Status answered = server::CheckHost(text, {"warden.example"});
  if (!host.has_value()) {
    FUZZ_CHECK(host.error().code() == StatusCode::kInvalidArgument, host.error().ToString());
    FUZZ_CHECK(answered.code() == StatusCode::kInvalidArgument, text);
    FUZZ_CHECK(Clean(host.error().message()), host.error().message());
    return;
  }
  FUZZ_CHECK(!host->name.empty() && Clean(host->name), text);
  for (const char c : host->name) FUZZ_CHECK(!std::isupper(static_cast<unsigned char>(c)), text);
  FUZZ_CHECK(!host->port || (*host->port >= 0 && *host->port <= 65535), text);
  const bool ours = host->ip_literal || host->name == "localhost" ||
                    host->name == "warden.example";
  FUZZ_CHECK(answered.ok() == ours, text + ": " + answered.ToString());
  if (!answered.ok()) FUZZ_CHECK(answered.code() == StatusCode::kFailedPrecondition, text);
}

// input split at '\n' into Transfer-Encoding values; its first byte's
// low bits say whether Content-Length came too and the version.
void CheckFramingOf(const std::string& text) {
  if (text.empty()) return;
  server::Framing f;
  f.content_length = (text[0] & 1) != 0;
  f.version = (text[0] & 2) != 0 ? 10 : 11;
  std::string_view rest(text);
  rest.remove_prefix(1);
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    f.transfer_encodings.push_back(rest.substr(0, nl));
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  const Status s = server::CheckFraming(f);
  if (s.ok() && !f.transfer_encodings.empty()) {
    // Accepted: exactly one coding, `chunked`, and nothing else.
    std::string letters;
    for (std::string_view v : f.transfer_encodings) {
      for (const char c : v) {
        if (c != ',' && c != ' ' && c != '\t') {
          letters += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
      }
    }
    FUZZ_CHECK(letters == "chunked" && !f.content_length && f.version == 11, text);
  }
  if (!s.ok()) {
    FUZZ_CHECK(s.code() == StatusCode::kInvalidArgument && IsOneLine(s.message()), text);
  }
}

// ADDR:PORT of --listen and the worker's endpoints: accepted only as an IP
// literal (localhost as 127.0.0.1) and a port; a refusal names the flag.
void CheckListen(const std::string& text) {
  std::string host;
  int port = -1;
  const Status s = server::ParseListen(text, &host, &port, "--metrics-listen");
  if (!s.ok()) {
    FUZZ_CHECK(s.code() == StatusCode::kInvalidArgument, s.ToString());
    FUZZ_CHECK(s.message().rfind("--metrics-listen '", 0) == 0, s.message());
    FUZZ_CHECK(s.message().find('\n') == std::string::npos, s.message());
    return;
  }
  FUZZ_CHECK(port >= 0 && port <= 65535, text);
  in6_addr scratch{};
  FUZZ_CHECK(host.find('\0') == std::string::npos, text);
  FUZZ_CHECK(inet_pton(AF_INET, host.c_str(), &scratch) == 1 ||
                 inet_pton(AF_INET6, host.c_str(), &scratch) == 1,
             text);
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;
  const Status s = server::SplitTarget(text, &path, &query);
  if (s.ok()) {
    FUZZ_CHECK(!path.empty() && path[0] == '/', text);
    FUZZ_CHECK(Clean(path), text);
    for (const auto& [name, value] : query) {
      FUZZ_CHECK(!name.empty() && Clean(name) && Clean(value), text);
    }
  } else {
    FUZZ_CHECK(s.code() == StatusCode::kInvalidArgument, s.ToString());
    FUZZ_CHECK(Clean(s.message()), s.message());
  }
  if (auto t = token::Parse(text)) {
    FUZZ_CHECK(token::Format(t->id, t->secret) == text, text);
  }
  CheckRoundTrip(text);
  CheckHostHeader(text);
  CheckFramingOf(text);
  CheckListen(text);
  return 0;
}
