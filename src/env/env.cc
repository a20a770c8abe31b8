#include "env/env.h"

namespace warden {

int ClockEnv::Poll(std::span<pollfd> fds, int64_t deadline_mono) {
  while (true) {
    const int n = EnvWrapper::Poll(fds, target().clock().MonotonicMs() + 1);
    if (n != 0 || clock_.MonotonicMs() >= deadline_mono) return n;
  }
}

}  // namespace warden
