#include "store/memory/memory_db.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <map>

namespace warden::memory {

void WakeBoard::Add(int fd) {
  MutexLock lock(mu_);
  fds_.insert(fd);
}

void WakeBoard::Remove(int fd) {
  MutexLock lock(mu_);
  fds_.erase(fd);
}

void WakeBoard::WakeAll() {
  MutexLock lock(mu_);
  // Non-blocking: a counter that is full (never drained) is woken already.
  for (int fd : fds_) (void)eventfd_write(fd, 1);
}

namespace {

struct Registry {
  Mutex mu;
  std::map<std::string, std::weak_ptr<Database>> by_name GUARDED_BY(mu);
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: stores may close at exit
  return *registry;
}

}  // namespace

std::shared_ptr<Database> OpenDatabase(const std::string& name, bool create,
                                       std::optional<uint64_t> jitter_seed, bool session_proofs) {
  Registry& r = TheRegistry();
  MutexLock lock(r.mu);
  // The names of databases since closed go as others open: the registry
  // stays as large as the set of databases open at once, give or take one.
  for (auto it = r.by_name.begin(); it != r.by_name.end();) {
    it = it->second.expired() ? r.by_name.erase(it) : std::next(it);
  }
  std::weak_ptr<Database>& slot = r.by_name[name];
  // (Its last store may close on another thread at any time, even now.)
  if (std::shared_ptr<Database> db = slot.lock()) return db;
  if (!create) {
    r.by_name.erase(name);
    return nullptr;
  }
  auto db = std::make_shared<Database>();
  db->session_proofs = session_proofs;
  if (jitter_seed) {
    MutexLock db_lock(db->mu);
    db->rng.seed(*jitter_seed);
  }
  slot = db;
  return db;
}

}  // namespace warden::memory
