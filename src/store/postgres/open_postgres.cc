#include "store/open_postgres.h"

#include <libpq-fe.h>

#include "store/postgres/pg_store.h"
#include "warden/text.h"

namespace warden {
namespace {

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

}  // namespace

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url, StoreOptions options) {
  WARDEN_RETURN_IF_ERROR(CheckPostgresUrl(url));
  return pg::PgStore::Open(url, options);
}

}  // namespace warden
