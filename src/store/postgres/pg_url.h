// Keeping database passwords out of everything warden shows: what a `--db`
// value may hold, and how to print it or an error about it.
//
// A database named by `--db` / WARDEN_DB may carry secrets:
//   postgresql://user:PASSWORD@host/db   (also postgres://; percent-encoded
//                                         or not)
//   postgresql://user@host/db?password=PASSWORD  (also sslpassword)
//   host=h password=PASSWORD dbname=d     (libpq keyword/value form; warden
//                                         takes it for a file path, and says
//                                         so, but must not echo the secret)
// RedactDbUrl replaces each with `***` and keeps the rest (user, host, port,
// database, other parameters), so a message still says which database it is
// about. A plain SQLite path is returned unchanged.
//
// libpq's own messages may quote part of a URL it could not parse (a bad
// percent-encoding quotes the whole password), so text that came from
// outside is passed through ScrubDbSecrets, which removes every occurrence
// of the URL's secrets, as written and decoded.
//
// Conservative by design: where the URL is malformed (a raw '@' or '/' in a
// password) more is hidden rather than less.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "warden/db_url.h"

namespace warden {

// RedactDbUrl and RedactDbUrlsIn are public: warden/db_url.h.

// The secrets `url` carries, as written and (when they differ) decoded;
// empty when it has none.
std::vector<std::string> DbSecrets(std::string_view url);

// `text` with every occurrence of any of `secrets` replaced by `***`.
std::string ScrubSecrets(std::string_view text, const std::vector<std::string>& secrets);
inline std::string ScrubDbSecrets(std::string_view text, std::string_view url) {
  return ScrubSecrets(text, DbSecrets(url));
}

}  // namespace warden
