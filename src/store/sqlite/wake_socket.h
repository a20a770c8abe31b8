// Cross-process wake-up for the SQLite backend, so an idle worker starts a
// new job within milliseconds instead of on its next poll.
//
// Each worker binds a Unix datagram socket in a directory beside the
// database (`<db>.wake/<worker id>.sock`). After committing an enqueue, a
// client sends one empty datagram to every socket there (non-blocking; a
// socket nobody listens on any more is removed). Polling stays as the
// fallback: a lost datagram delays a job by at most the poll interval.
//
// Thread safety: WakeListener is used by one thread; NotifyWorkers is
// thread-safe.
#pragma once

#include <string>

#include "warden/job.h"
#include "warden/status.h"

namespace warden {

// `<db>.wake`; "" for an in-memory database (nothing to wake).
std::string WakeDirFor(const std::string& db_path);

class WakeListener {
 public:
  WakeListener() = default;
  ~WakeListener();
  WakeListener(const WakeListener&) = delete;
  WakeListener& operator=(const WakeListener&) = delete;

  // Binds `<dir>/<name>.sock`. A failure leaves the listener inert (the
  // worker then polls).
  Status Bind(const std::string& dir, const std::string& name);
  int fd() const { return fd_; }
  bool Drain();  // discards queued datagrams; true if there were any

 private:
  int fd_ = -1;
  std::string path_;
};

// Wakes every worker listening in `dir`. Best effort.
void NotifyWorkers(const std::string& dir);

}  // namespace warden
