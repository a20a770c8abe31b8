// How a request's body is framed (RFC 9112 §6): the one defence against
// request smuggling. A body is framed by Content-Length or by the chunked
// transfer coding; anything else would leave the server and a proxy in
// front of it to disagree on where the body ends, and the rest of the body
// would be read as a second request. So a request that is framed in any
// other way is refused (400, and the connection closed), never guessed at:
// - Transfer-Encoding with any coding but one `chunked` (`gzip`,
//   `chunked, gzip`, `foo, chunked`: the server decodes no other coding,
//   and one whose last coding is not chunked has no end but the
//   connection's);
// - Transfer-Encoding and Content-Length together (§6.3: an attack, or a
//   broken proxy);
// - Transfer-Encoding on HTTP/1.0 (§6.1: 1.0 has no transfer codings).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "warden/status.h"

namespace warden::server {

struct Framing {
  // Every Transfer-Encoding field's value, in order (empty: none sent).
  std::vector<std::string_view> transfer_encodings;
  bool content_length = false;  // a Content-Length field was sent
  int version = 11;             // 10 or 11
};

// Ok when the body is framed by Content-Length alone, by one `chunked`
// coding alone, or there is none; otherwise InvalidArgument saying why.
Status CheckFraming(const Framing& f);

}  // namespace warden::server
