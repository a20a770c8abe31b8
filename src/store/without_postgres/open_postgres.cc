// The PostgreSQL store of a build without it (-DWARDEN_POSTGRES=OFF).
#include "store/open_postgres.h"

namespace warden {

// Not a usage error (the URL may be right) nor an outage to wait out (a
// worker's --start-timeout retries only transient errors): the build must
// change, so a person must act.
Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string&, StoreOptions) {
  return FailedPrecondition(
      "this warden was built without PostgreSQL (-DWARDEN_POSTGRES=OFF), so it cannot open a "
      "postgresql:// database; use a SQLite file (--db PATH), or a build with PostgreSQL");
}

}  // namespace warden
