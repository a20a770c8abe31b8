#include <string>

#include "store/postgres/pg_store.h"
#include "store/sqlite/sqlite_store.h"
#include "store/store.h"

namespace warden {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

Result<std::unique_ptr<Store>> OpenStore(const std::string& url, StoreOptions options) {
  if (url.empty()) return InvalidArgument("empty database URL");
  if (StartsWith(url, "postgres://") || StartsWith(url, "postgresql://")) {
    return pg::PgStore::Open(url, options);
  }
  std::string path = StartsWith(url, "sqlite:") ? url.substr(7) : url;
  if (StartsWith(path, "//")) path = path.substr(2);  // sqlite:///abs/path
  const size_t q = path.find('?');
  if (q != std::string::npos) {
    const std::string query = path.substr(q + 1);
    path = path.substr(0, q);
    if (query == "sync=normal") {
      options.durable = false;
    } else if (query != "sync=full") {
      return InvalidArgument("unknown database option '" + query +
                             "' (known: sync=full, sync=normal)");
    }
  }
  if (path.empty()) return InvalidArgument("database URL '" + url + "' names no file");
  return sqlite::SqliteStore::Open(path, options);
}

}  // namespace warden
