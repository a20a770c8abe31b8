// A worker's session on an in-memory database: wake-ups (an eventfd on the
// database's WakeBoard) and, on a database made with
// StoreOptions::memory_session_proofs, a lock as PostgreSQL's session
// lock: taken when the session opens (if free), held while it lives, taken
// again by Drain once lost. Its loss, when the session closes or the
// "server" drops it (ServerDrops: a client silent past its keepalive, a
// host that lost power), shows in WorkerListLive's session_lost, which the
// other workers take for proof of death (maintenance/sweeper.h). Without
// proofs, as on SQLite: the worker's death is proven from its process.
//
// Thread safety: one thread uses a session (WorkerSession's contract);
// ServerDrops may come from any.
#pragma once

#include <memory>

#include "store/memory/memory_db.h"
#include "store/store.h"

namespace warden::memory {

class MemorySession final : public WorkerSession {
 public:
  MemorySession(std::shared_ptr<Database> db, WorkerId worker, int fd);
  ~MemorySession() override;
  MemorySession(const MemorySession&) = delete;
  MemorySession& operator=(const MemorySession&) = delete;

  int fd() override { return fd_; }
  Result<bool> Drain() override;
  bool LossProvesDeath() const override { return db_->session_proofs; }
  bool Holds() const override;

  // The server gives this session up: its lock is free (and lost).
  void ServerDrops();

 private:
  void TryLock();

  const std::shared_ptr<Database> db_;
  const WorkerId worker_;
  const int fd_;
  int64_t number_ = 0;  // this session's, as a lock holder
};

}  // namespace warden::memory
