#include "runtime/log.h"

#include <unistd.h>

#include <cstdio>

#include "env/system_clock.h"
#include "warden/duration.h"

namespace warden {
namespace {

void WriteLine(const std::string& out) {
  // One write per line so lines from several threads do not interleave.
  (void)!write(STDERR_FILENO, out.data(), out.size());
}

}  // namespace

LogFn StderrLog(LogFormat format, const std::string& worker_name,
                std::function<int64_t()> worker_id) {
  if (format == LogFormat::kJson) {
    return [worker_name, worker_id = std::move(worker_id)](const LogRecord& r) {
      Json context = {{"worker", worker_name}};
      if (const int64_t id = worker_id ? worker_id() : 0; id != 0) context["worker_id"] = id;
      WriteLine(JsonLogLine(r, context, SystemClock::Get().NowMs(), getpid()));
    };
  }
  const std::string prefix = "worker " + worker_name;
  return [prefix](const LogRecord& r) {
    WriteLine(FormatTime(SystemClock::Get().NowMs()) + " warden[" + std::to_string(getpid()) +
              "] " + prefix + ": " + r.message + "\n");
  };
}

}  // namespace warden
