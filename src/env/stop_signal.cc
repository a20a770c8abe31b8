// StopSignal's eventfd: made on first wait, signalled by every request
// after the reason is set, so a waiter never misses one (see fd()).
#include "env/stop_signal.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace warden {

StopSignal::~StopSignal() {
  if (fd_ >= 0) close(fd_);
}

namespace {
void Signal(int fd) {
  uint64_t one = 1;
  (void)!write(fd, &one, sizeof one);
}
}  // namespace

int StopSignal::fd() const {
  std::call_once(made_, [this] {
    fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    // A request that came before the fd existed did not signal it.
    if (fd_ >= 0 && requested()) Signal(fd_);
  });
  return fd_;
}

void StopSignal::Request(StopReason why) {
  if (why == StopReason::kNone) return;
  StopReason expected = StopReason::kNone;
  reason_.compare_exchange_strong(expected, why);
  // After the reason is set: either fd() sees it, or its fd is seen here.
  if (const int fd = fd_.load(); fd >= 0) Signal(fd);
}

}  // namespace warden
