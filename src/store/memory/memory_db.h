// The in-memory databases of this process, by name, and the wake-ups of
// the worker sessions opened on them.
//
// A Database lives as long as a Store opened on it (each holds a
// shared_ptr): like a SQLite shared-cache in-memory database, it is gone
// when the last one closes, and a Store opened on its name afterwards gets
// a new, empty one. The registry keeps only weak references.
//
// Thread safety: OpenDatabase may be called from any thread. A Database's
// tables are guarded by its mutex; every Store method holds it throughout
// (one transaction). A WakeBoard is thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "core/mutex.h"
#include "store/memory/memory_rows.h"

namespace warden::memory {

// The eventfds of the open worker sessions of one database.
class WakeBoard {
 public:
  void Add(int fd);
  void Remove(int fd);
  void WakeAll();  // best effort

 private:
  Mutex mu_;
  std::set<int> fds_ GUARDED_BY(mu_);
};

struct Database {
  Mutex mu;
  Tables t GUARDED_BY(mu);
  // Backoff jitter (core/retry.h), as SqliteStore draws it.
  std::mt19937_64 rng GUARDED_BY(mu){std::random_device{}()};
  // Shared with the sessions, which may outlive every Store.
  const std::shared_ptr<WakeBoard> wake = std::make_shared<WakeBoard>();
  // StoreOptions::memory_session_proofs, as its creator opened it (set
  // before any other store can see it).
  bool session_proofs = false;
};

// The live database named `name`; else a new empty one, or null if not
// `create`.
// `jitter_seed` seeds a new database's backoff jitter, `session_proofs`
// decides its sessions (StoreOptions).
std::shared_ptr<Database> OpenDatabase(const std::string& name, bool create,
                                       std::optional<uint64_t> jitter_seed = std::nullopt,
                                       bool session_proofs = false);

}  // namespace warden::memory
