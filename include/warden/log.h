// Log lines of warden's long-running commands (`warden worker`, `warden
// serve`): a level, a message, and, when the line is about a job, its id.
// On stderr they are text for people (the default) or, with `--log-format
// json`, one JSON object a line for a log pipeline (journald, Loki, an
// ELK stack), every line with the same keys:
//
//   {"time":"2026-11-27T02:10:00.123Z","level":"info","pid":4242,
//    "worker":"box-1","worker_id":7,"job":42,"message":"job 42 (resize) ...",
//    "task":"resize","attempt":1,"outcome":"succeeded","duration_ms":12}
//
// "time", "level", "pid" and "message" are always there; the writer adds
// the keys that say who it is ("worker" and, once registered, "worker_id";
// `serve` says "component":"serve"), "job" comes with every line about a job,
// and some lines carry more facts (LogRecord::fields). Nothing here does
// I/O: the caller writes the line.
//
// Thread safety: the functions are pure.
#pragma once

#include <optional>
#include <string>

#include "warden/job.h"

namespace warden {

// How much a worker says. kInfo (the default): start-up, shutdown,
// recovery, and one line per finished attempt (succeeded or failed);
// kDebug adds a line as each job starts; kWarn only what went wrong
// (failed attempts, retried store errors, refusals); kError nothing but
// what stops the worker.
enum class LogLevel { kError, kWarn, kInfo, kDebug };
const char* LogLevelName(LogLevel level);
std::optional<LogLevel> ParseLogLevel(const std::string& name);

enum class LogFormat { kText, kJson };
const char* LogFormatName(LogFormat format);
std::optional<LogFormat> ParseLogFormat(const std::string& name);

// One log line's facts.
struct LogRecord {
  LogLevel level = LogLevel::kInfo;
  std::string message;
  JobId job = 0;  // the job the line is about; 0: none
  // More facts, as keys of the JSON line (an object, or null for none):
  // "task", "attempt", "outcome", "duration_ms"... A key that names one of
  // the line's own ("time", "level", "pid", "job", "message", or one of
  // `context`'s) is left out.
  Json fields;
};

// The JSON line for `record`, with its '\n': "time" (`now`, RFC 3339 UTC
// with milliseconds), "level", "pid", then `context`'s keys (an object: who
// writes), "job" (when record.job != 0), "message", then record.fields.
// Never throws: bytes that are not UTF-8 (a job's stderr quoted in a
// message) are written as U+FFFD, control bytes escaped, so the line is one
// line of valid JSON whatever the message holds.
std::string JsonLogLine(const LogRecord& record, const Json& context, TimeMs now, int pid);

}  // namespace warden
