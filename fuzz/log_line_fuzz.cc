// A JSON log line (`--log-format json`, warden/log.h) whose message and
// fields hold any bytes: a job's stderr, a task name, a database's error.
// Checks: JsonLogLine never throws; its output is exactly one line, ending
// in '\n', of valid JSON (an object); the message reads back as the input
// where the input is valid UTF-8 (else with U+FFFD in place of the bad
// bytes, and no longer than 3 bytes for each input byte); the fixed keys
// (time, level, pid, job, message) are never overridden by fields.
#include "warden/log.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The first half is the message, the rest a field's key and value.
  const std::string message = text.substr(0, size / 2);
  const std::string key = text.substr(size / 2, (size - size / 2) / 2);
  const std::string value = text.substr(size / 2 + key.size());
  LogRecord r{static_cast<LogLevel>(size % 4), message, static_cast<JobId>(size), Json::object()};
  r.fields[key] = value;
  r.fields["message"] = value;
  const std::string line = JsonLogLine(r, {{"worker", value}}, 1'795'000'000'000, 42);
  FUZZ_CHECK(!line.empty() && line.back() == '\n', line);
  FUZZ_CHECK(line.find('\n') == line.size() - 1, line);
  const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(j.is_object(), line);
  FUZZ_CHECK(j.at("pid") == 42 && j.at("level") == LogLevelName(r.level), line);
  FUZZ_CHECK(j.contains("job") == (size != 0), line);
  FUZZ_CHECK(j.contains("message") && j.at("message").is_string(), line);
  const std::string back = j.at("message").get<std::string>();
  bool valid_utf8 = true;
  try {
    (void)Json(message).dump();
  } catch (const Json::exception&) {
    valid_utf8 = false;
  }
  if (valid_utf8) {
    FUZZ_CHECK(back == message, line);
  } else {
    FUZZ_CHECK(back.find("\xEF\xBF\xBD") != std::string::npos && back.size() <= 3 * message.size(),
               line);
  }
  return 0;
}
