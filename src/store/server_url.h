// Whether an OpenStore URL names a database server rather than an embedded
// file: a server restarts and fails over, and a client waits that out; a
// file's errors (read-only, full, locked past busy_timeout) do not pass by
// waiting at start.
#pragma once

#include <string_view>

namespace warden {

inline bool NamesDatabaseServer(std::string_view url) {
  return url.starts_with("postgres://") || url.starts_with("postgresql://");
}

}  // namespace warden
