#include <string_view>

#include "warden/duration.h"
#include "warden/log.h"

namespace warden {
namespace {

// Strict JSON whatever the bytes: invalid UTF-8 becomes U+FFFD instead of
// the exception nlohmann's dump() throws by default.
std::string Dump(const Json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

void Add(std::string& line, std::string_view key, const Json& value) {
  line += ',';
  line += Dump(Json(std::string(key)));
  line += ':';
  line += Dump(value);
}

bool Reserved(const std::string& key, const Json& context) {
  for (const char* own : {"time", "level", "pid", "job", "message"}) {
    if (key == own) return true;
  }
  return context.is_object() && context.contains(key);
}

}  // namespace

std::string JsonLogLine(const LogRecord& record, const Json& context, TimeMs now, int pid) {
  // Written key by key, in this order, so that a person reading the raw
  // lines finds the time and level first (a Json object sorts its keys).
  std::string line = "{\"time\":" + Dump(FormatTime(now));
  Add(line, "level", LogLevelName(record.level));
  Add(line, "pid", pid);
  if (context.is_object()) {
    for (const auto& [key, value] : context.items()) {
      if (!Reserved(key, Json())) Add(line, key, value);
    }
  }
  if (record.job != 0) Add(line, "job", record.job);
  Add(line, "message", record.message);
  if (record.fields.is_object()) {
    for (const auto& [key, value] : record.fields.items()) {
      if (!Reserved(key, context)) Add(line, key, value);
    }
  }
  line += "}\n";
  return line;
}

}  // namespace warden
