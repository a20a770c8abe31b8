#include "server/host_check.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

#include "warden/text.h"

namespace warden::server {
namespace {

// A DNS name's characters (RFC 1123 labels, and '_' some hosts carry); no
// percent-encoding: no browser sends a Host that needs it.
bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Result<std::optional<int>> ParsePort(std::string_view text, std::string_view whole) {
  if (text.empty()) return std::optional<int>();  // "host:" is allowed: no port
  if (text.size() > 5 || !std::all_of(text.begin(), text.end(), [](char c) {
        return c >= '0' && c <= '9';
      })) {
    return InvalidArgument("Host '" + OneLine(std::string(whole), 80) + "' has no valid port");
  }
  const int port = std::stoi(std::string(text));
  if (port > 65535) {
    return InvalidArgument("Host '" + OneLine(std::string(whole), 80) + "' has no valid port");
  }
  return std::optional<int>(port);
}

}  // namespace

Result<HostHeader> ParseHostHeader(std::string_view value) {
  if (value.empty()) {
    return InvalidArgument("the request has no Host header (HTTP/1.1 requires one)");
  }
  const auto malformed = [&] {
    return InvalidArgument("Host '" + OneLine(std::string(value), 80) +
                           "' is not a host name or IP address with an optional port");
  };
  // Visible ASCII only: no space, control byte or NUL (inet_pton would stop
  // at a NUL and take "[::\0junk]" for "::"), no byte past ASCII (browsers
  // send a name's punycode).
  if (!std::all_of(value.begin(), value.end(), [](char c) { return c > ' ' && c < 0x7f; })) {
    return malformed();
  }
  HostHeader out;
  std::string_view rest;
  if (value.front() == '[') {
    const size_t close = value.find(']');
    if (close == std::string_view::npos) return malformed();
    out.name = Lower(value.substr(1, close - 1));
    in6_addr v6{};
    if (inet_pton(AF_INET6, out.name.c_str(), &v6) != 1) return malformed();
    out.ip_literal = true;
    rest = value.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return malformed();
  } else {
    const size_t colon = value.find(':');
    out.name = Lower(value.substr(0, colon));
    if (colon != std::string_view::npos) rest = value.substr(colon);
    if (out.name.empty() || !std::all_of(out.name.begin(), out.name.end(), IsNameChar)) {
      return malformed();
    }
    in_addr v4{};
    out.ip_literal = inet_pton(AF_INET, out.name.c_str(), &v4) == 1;
  }
  if (!rest.empty()) {
    WARDEN_ASSIGN_OR_RETURN(out.port, ParsePort(rest.substr(1), value));
  }
  return out;
}

Status CheckHost(std::string_view host_header, const std::vector<std::string>& allowed) {
  WARDEN_ASSIGN_OR_RETURN(HostHeader host, ParseHostHeader(host_header));
  if (host.ip_literal || host.name == "localhost") return Status::Ok();
  for (const std::string& name : allowed) {
    if (Lower(name) == host.name) return Status::Ok();
  }
  return FailedPrecondition(
      "this server does not answer to the name '" + OneLine(host.name, 80) +
      "' (a page whose name was made to point here, DNS rebinding, would act through it): "
      "it answers IP addresses, localhost and the names given with --allow-host");
}

Status ValidateAllowedHost(std::string_view name) {
  auto parsed = ParseHostHeader(name);
  if (!parsed.has_value() || name.find_first_of(":[") != std::string_view::npos) {
    return InvalidArgument("--allow-host '" + OneLine(std::string(name), 80) +
                           "' is not a host name (a DNS name such as warden.example.com, "
                           "without a port)");
  }
  return Status::Ok();
}

}  // namespace warden::server
