#include "server/listen_addr.h"

#include <arpa/inet.h>

#include "warden/text.h"

namespace warden::server {

Status ParseListen(const std::string& listen, std::string* host, int* port, const char* flag) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return InvalidArgument(std::string(flag) + " '" + OneLine(listen, 80) +
                           "' is not ADDR:PORT (e.g. 127.0.0.1:7878)");
  }
  *host = listen.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  const std::string p = listen.substr(colon + 1);
  if (p.find_first_not_of("0123456789") != std::string::npos || p.size() > 5 ||
      std::stoi(p) > 65535) {
    return InvalidArgument(std::string(flag) + " '" + OneLine(listen, 80) + "': '" +
                           OneLine(p, 20) + "' is not a port (0-65535)");
  }
  *port = std::stoi(p);
  // localhost is loopback (RFC 6761), never what a resolver says it is.
  if (*host == "localhost") *host = "127.0.0.1";
  in6_addr scratch{};
  // c_str() ends at a NUL: "127.0.0.1\0x" would pass as 127.0.0.1.
  if (host->find('\0') != std::string::npos ||
      (inet_pton(AF_INET, host->c_str(), &scratch) != 1 &&
       inet_pton(AF_INET6, host->c_str(), &scratch) != 1)) {
    return InvalidArgument(std::string(flag) + " '" + OneLine(listen, 80) + "': '" +
                           OneLine(*host, 60) +
                           "' is not an IP address or localhost (no other host names: what a "
                           "name resolves to can change)");
  }
  return Status::Ok();
}

bool IsLoopback(const std::string& host) { return host == "::1" || host.rfind("127.", 0) == 0; }

}  // namespace warden::server
