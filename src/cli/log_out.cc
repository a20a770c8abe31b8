#include "cli/log_out.h"

#include <unistd.h>

#include <chrono>
#include <string_view>

#include "warden/text.h"

namespace warden::cli {
namespace {

LogFormat format = LogFormat::kText;
Json& Context() {
  static Json context = Json::object();
  return context;
}

}  // namespace

void SetLogFormat(LogFormat f, Json context) {
  format = f;
  Context() = std::move(context);
}

LogFormat CurrentLogFormat() { return format; }

Status UseLogFormat(const std::string& flag_value, Json context) {
  const auto parsed = ParseLogFormat(flag_value);
  if (!parsed) {
    return InvalidArgument("--log-format must be text or json, not '" + OneLine(flag_value, 40) +
                           "'");
  }
  SetLogFormat(*parsed, std::move(context));
  return Status::Ok();
}

bool WantsJsonLogs(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--log-format=json") return true;
    if (arg == "--log-format" && i + 1 < argc && std::string_view(argv[i + 1]) == "json") {
      return true;
    }
    if (arg == "--db" || arg == "--config") ++i;  // its value
  }
  return false;
}

void LogOut(LogLevel level, const std::string& message, JobId job) {
  std::string line;
  if (format == LogFormat::kJson) {
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    line = JsonLogLine(LogRecord{level, message, job, Json()}, Context(), now.count(), getpid());
  } else {
    line = "warden: " + message + "\n";
  }
  (void)!write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace warden::cli
