#include "store/memory/memory_session.h"

#include <sys/eventfd.h>
#include <unistd.h>

namespace warden::memory {

MemorySession::MemorySession(std::shared_ptr<Database> db, WorkerId worker, int fd)
    : db_(std::move(db)), worker_(worker), fd_(fd) {
  db_->wake->Add(fd_);
  {
    MutexLock lock(db_->mu);
    number_ = ++db_->t.last_session;
  }
  TryLock();
}

MemorySession::~MemorySession() {
  ServerDrops();  // closing a session frees its lock at once
  db_->wake->Remove(fd_);
  close(fd_);
}

void MemorySession::TryLock() {
  if (!db_->session_proofs) return;
  MutexLock lock(db_->mu);
  SessionLock& l = db_->t.session_locks[worker_];
  if (l.holder != 0) return;  // an older session of ours the server has not reaped
  l.holder = number_;
  l.taken_once = true;
  ++l.epoch;
}

bool MemorySession::Holds() const {
  if (!db_->session_proofs) return true;
  MutexLock lock(db_->mu);
  auto l = db_->t.session_locks.find(worker_);
  return l != db_->t.session_locks.end() && l->second.holder == number_;
}

void MemorySession::ServerDrops() {
  if (!db_->session_proofs) return;
  MutexLock lock(db_->mu);
  auto l = db_->t.session_locks.find(worker_);
  if (l != db_->t.session_locks.end() && l->second.holder == number_) l->second.holder = 0;
}

Result<bool> MemorySession::Drain() {
  eventfd_t wakes = 0;
  const bool woken = eventfd_read(fd_, &wakes) == 0 && wakes > 0;
  if (Holds()) return woken;
  TryLock();
  return true;  // as a new PostgreSQL session: it may have missed wake-ups
}

}  // namespace warden::memory
