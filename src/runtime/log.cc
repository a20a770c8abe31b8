#include "runtime/log.h"

#include <unistd.h>

#include <cstdio>

#include "warden/duration.h"
#include "env/system_clock.h"

namespace warden {

LogFn StderrLog(const std::string& prefix) {
  return [prefix](const std::string& line) {
    const std::string out = FormatTime(SystemClock::Get().NowMs()) + " warden[" +
                            std::to_string(getpid()) + "] " + prefix + ": " + line + "\n";
    // One write per line so lines from several threads do not interleave.
    (void)!write(STDERR_FILENO, out.data(), out.size());
  };
}

}  // namespace warden
