// Which names `warden serve` answers to: its defence against DNS rebinding.
//
// A page of another site can make its own name resolve to 127.0.0.1 once
// the browser has loaded it ("DNS rebinding"). Its requests then reach this
// server as same-origin ones, Origin and Host both `rebind.example:7878`,
// so comparing the two proves nothing. A server therefore answers only a
// Host no DNS answer can make point here behind the browser's back, or one
// the operator named:
// - an IP address literal (IPv4, or IPv6 in brackets): no lookup gives it;
// - `localhost`: browsers resolve it to loopback without asking DNS;
// - the names given with --allow-host (a reverse proxy's, this host's DNS
//   name), compared without regard to case.
// The port is not compared: `ssh -L 8080:127.0.0.1:7878` and reverse
// proxies change it, and a rebinding page reaches this server only on its
// own port anyway.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warden/status.h"

namespace warden::server {

// A Host header split (RFC 9110 §7.2: uri-host [":" port]): the name
// lower-cased, an IPv6 literal without its brackets.
struct HostHeader {
  std::string name;
  std::optional<int> port;
  bool ip_literal = false;
};

// Malformed forms are errors, never guesses (fuzz/host_header_fuzz.cc).
Result<HostHeader> ParseHostHeader(std::string_view value);

// Ok when a request naming `host_header` may be answered; otherwise why
// not (InvalidArgument for a malformed or missing Host, FailedPrecondition
// for a name this server does not answer to).
Status CheckHost(std::string_view host_header, const std::vector<std::string>& allowed);

// A name --allow-host may take: a DNS name, no port, no wildcard.
Status ValidateAllowedHost(std::string_view name);

}  // namespace warden::server
