// Showing a database URL without its password.
//
// `--db` / WARDEN_DB may carry secrets (postgresql://user:PASSWORD@host/db,
// `?password=`, a libpq keyword/value string). Whatever warden prints or
// logs about a database goes through these; an application embedding the
// library should do the same.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace warden {

// The URL (or path, or keyword/value string) with every password replaced
// by `***`; the user, host, port, database and other parameters are kept.
// A plain SQLite path is returned unchanged.
std::string RedactDbUrl(std::string_view url);

// Free text (a usage message quoting the arguments) with every PostgreSQL
// URL in it redacted, and every `password=VALUE` pair.
std::string RedactDbUrlsIn(std::string_view text);

}  // namespace warden
