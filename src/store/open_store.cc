#include <string>

#include "warden/text.h"
#include "store/memory/memory_store.h"
#include "store/open_postgres.h"
#include "store/postgres/pg_url.h"
#include "store/server_url.h"
#include "store/sqlite/sqlite_store.h"
#include "store/store.h"

namespace warden {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

Result<std::unique_ptr<Store>> OpenAny(const std::string& url, StoreOptions options) {
  if (url.empty()) return InvalidArgument("empty database URL");
  if (NamesDatabaseServer(url)) {
    return OpenPostgresStore(url, options);
  }
  // Before `memory:` meant this store, it was a SQLite file of that name.
  if (StartsWith(url, "memory:")) return memory::MemoryStore::Open(url.substr(7), options);
  std::string path = StartsWith(url, "sqlite:") ? url.substr(7) : url;
  if (StartsWith(path, "//")) path = path.substr(2);  // sqlite:///abs/path
  const size_t q = path.find('?');
  if (q != std::string::npos) {
    const std::string query = path.substr(q + 1);
    path = path.substr(0, q);
    if (query == "sync=normal") {
      options.durable = false;
    } else if (query != "sync=full") {
      return InvalidArgument("unknown database option '" + OneLine(query, 60) +
                             "' (known: sync=full, sync=normal)");
    }
  }
  if (path.empty()) {
    return InvalidArgument("database URL '" + OneLine(RedactDbUrl(url), 200) +
                           "' names no file");
  }
  return sqlite::SqliteStore::Open(path, options);
}

}  // namespace

// Every error may quote the URL (a path that is really a keyword/value
// string, libpq's parse errors): none may show a password.
Result<std::unique_ptr<Store>> OpenStore(const std::string& url, StoreOptions options) {
  auto store = OpenAny(url, options);
  if (store.has_value()) return store;
  return Status(store.error().code(), ScrubDbSecrets(store.error().message(), url));
}

}  // namespace warden
