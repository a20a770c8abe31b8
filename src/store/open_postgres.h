// Opening the PostgreSQL store, or saying that this build has none.
//
// OpenStore (store.h) hands every `postgresql://` / `postgres://` URL here.
// Defined by store/postgres/open_postgres.cc, or, in a build configured with
// -DWARDEN_POSTGRES=OFF (no libpq), by store/without_postgres/, whose
// answer is one error that says so. Nothing else of the library names the
// PostgreSQL backend, so such a build needs no libpq at all.
//
// Thread safety: as PgStore::Open.
#pragma once

#include <memory>
#include <string>

#include "store/store.h"

namespace warden {

// `url` names a database server (server_url.h). Errors may quote it:
// OpenStore scrubs its secrets from them.
Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url, StoreOptions options);

}  // namespace warden
