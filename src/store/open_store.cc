#include <libpq-fe.h>

#include <string>

#include "warden/text.h"
#include "store/memory/memory_store.h"
#include "store/postgres/pg_store.h"
#include "store/postgres/pg_url.h"
#include "store/server_url.h"
#include "store/sqlite/sqlite_store.h"
#include "store/store.h"

namespace warden {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// A URL that libpq cannot parse never connects: a usage error (exit 2), not
// an outage to retry. Ports are checked here too (libpq checks them only
// when it connects).
Status CheckPostgresUrl(const std::string& url) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (opts == nullptr) {
    if (err == nullptr) return Status::Ok();  // out of memory: let the connect report it
    std::string msg = err;
    PQfreemem(err);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    return InvalidArgument("invalid PostgreSQL URL: " + OneLine(msg, 200));
  }
  std::string bad_port;
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
    if (std::string(o->keyword) != "port" || o->val == nullptr) continue;
    for (const char* c = o->val; *c; ++c) {
      if ((*c < '0' || *c > '9') && *c != ',') bad_port = o->val;
    }
  }
  PQconninfoFree(opts);
  if (!bad_port.empty()) {
    return InvalidArgument("invalid PostgreSQL URL: port '" + OneLine(bad_port, 40) +
                           "' is not a number");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Store>> OpenAny(const std::string& url, StoreOptions options) {
  if (url.empty()) return InvalidArgument("empty database URL");
  if (NamesDatabaseServer(url)) {
    WARDEN_RETURN_IF_ERROR(CheckPostgresUrl(url));
    return pg::PgStore::Open(url, options);
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
