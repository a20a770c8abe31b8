// What the listener's connections share besides the threads: which of them
// are idle (the first to be closed when the connection limit is reached),
// and the memory the bodies being read may hold together.
//
// Thread safety: both classes may be used from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>

namespace warden::server {

// Connections waiting for a request (kept alive after one, or never sent
// one; a TLS one still in its handshake), oldest first. At the connection
// limit the listener closes the oldest to make room: an idle connection
// holds a slot that a client with a request needs, and a flood of idle
// ones (no token needed to open them) must not lock out the rest.
class IdleConnections {
 public:
  class Member {
   public:
    virtual ~Member() = default;
    // Closes the connection (from any thread: it posts to its own).
    virtual void Evict() = 0;

   private:
    friend class IdleConnections;
    bool listed_ = false;  // guarded by the list's mutex
    std::list<std::pair<Member*, std::weak_ptr<Member>>>::iterator pos_;
  };

  // `m` waits for a request from now on (again: no-op).
  void Enter(Member* m, std::weak_ptr<Member> weak) {
    std::lock_guard lock(mu_);
    if (m->listed_) return;
    m->pos_ = list_.emplace(list_.end(), m, std::move(weak));
    m->listed_ = true;
  }
  // `m` has a request (or is gone).
  void Leave(Member* m) {
    std::lock_guard lock(mu_);
    if (!m->listed_) return;
    list_.erase(m->pos_);
    m->listed_ = false;
  }
  // Closes the connection idle the longest; false if none is.
  bool EvictOldest() {
    std::shared_ptr<Member> victim;
    {
      std::lock_guard lock(mu_);
      while (!victim && !list_.empty()) {
        auto [member, weak] = list_.front();
        list_.pop_front();
        member->listed_ = false;
        victim = weak.lock();  // null: being destroyed, and closed anyway
      }
    }
    if (!victim) return false;
    victim->Evict();
    return true;
  }

 private:
  std::mutex mu_;
  std::list<std::pair<Member*, std::weak_ptr<Member>>> list_;
};

// Bytes reserved for bodies being read or handled, up to a limit.
class BodyBudget {
 public:
  explicit BodyBudget(size_t limit) : limit_(limit) {}
  // Reserves `n` bytes; false (nothing reserved) if that would pass the
  // limit.
  bool Take(size_t n) {
    size_t used = used_.load();
    do {
      if (n > limit_ || used > limit_ - n) return false;
    } while (!used_.compare_exchange_weak(used, used + n));
    return true;
  }
  void Give(size_t n) { used_ -= n; }

 private:
  const size_t limit_;
  std::atomic<size_t> used_{0};
};

}  // namespace warden::server
