// Jobs written as JSON objects: the lines of `warden add --batch`
// (newline-delimited JSON on stdin) and the jobs of the HTTP API's batch
// (`POST /v1/jobs/batch`), one parser for both. A job object's fields are
// `warden add`'s flags in snake_case, with the same checks and limits
// (ValidateSpec's, and the flags' ranges):
//
//   {"task": "email", "payload": {"to": "a@example.com"}, "queue": "mail",
//    "priority": 1, "delay": "5s", "timeout": "1m", "unique_key": "k"}
//
//   task, cmd, queue, unique_key, concurrency_key   string
//   payload                                        any JSON (default {})
//   priority                                       integer (an int)
//   max_attempts, max_crashes                      integer, 1 to 1000000
//   delay, timeout, lease, start_deadline          duration string: "30s", "1h30m"
//   at                                             RFC 3339 string with its offset
//   retry                                          "none", "default" or "forever"
//   at_most_once                                   true or false
//
// A field left out, or null, keeps its value from JobJsonOptions::defaults
// (`warden add --batch`: its flags); `payload: null` is the payload null, as
// `warden add t null` stores it. `delay` and `at` are one setting: a job
// that gives either replaces both defaults, and giving both is refused. A
// job must end up with a task or a command (`cmd`; its task is then
// `command` unless given). An unknown field is refused by name, with the
// closest known one when it looks like a typo ("queu": did you mean
// "queue"?).
//
// Errors are kInvalidArgument, one line of at most about 300 bytes, outside
// text quoted through OneLine; JobLineReader prefixes them with "line N: ".
//
// Thread safety: the functions are pure; a JobLineReader is one thread's.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warden/client.h"  // kMaxPayloadBytes
#include "warden/job.h"
#include "warden/status.h"

namespace warden {

// The most jobs one batch transaction holds. `warden add --batch` stores a
// longer input in transactions of this many (docs/cli.md); the HTTP API's
// batch, one transaction, is meant to refuse more.
inline constexpr size_t kMaxBatchJobs = 10'000;
// The longest job line JobLineReader reads: twice the payload limit, so
// that any payload the limit allows fits, with room for the other fields
// and for whitespace.
inline constexpr size_t kMaxJobLineBytes = 2 * kMaxPayloadBytes;

struct JobJsonOptions {
  // What a field a job leaves out (or sets to null) is. An empty task and
  // command: each job must give one.
  JobSpec defaults;
  // Whether `cmd` (a shell command job) is accepted.
  bool allow_commands = true;
  // Now, by the caller's clock: an `at` more than kMaxDuration after it is
  // refused (a mistyped year), as `warden add --at` refuses it. Unset: not
  // checked.
  std::optional<TimeMs> now;
};

// Every field a job object may have, in the order the header lists them.
const std::vector<std::string>& JobJsonFields();

// The JobSpec that `job` describes, checked as Client::Enqueue would check
// it (ValidateSpec).
Result<JobSpec> JobSpecFromJson(const Json& job, const JobJsonOptions& options = {});
// The same for the text of one job: strict JSON (ParseJsonText), which must
// be an object. A payload may nest at most kMaxJsonDepth - 1 levels here:
// the object around it is one.
Result<JobSpec> JobSpecFromJsonText(std::string_view text, const JobJsonOptions& options = {});

// One job of newline-delimited JSON.
struct JobLine {
  int64_t number = 0;  // its line, from 1
  std::string text;    // the line as read, without its line break
  JobSpec spec;
};

// Reads newline-delimited JSON jobs, one object a line (blank lines, and
// lines of spaces and tabs, are skipped), each through JobSpecFromJsonText.
//
//   JobLineReader reader(std::cin, options);
//   while (true) {
//     auto line = reader.Next();
//     if (!line.has_value()) return line.error();  // "line 3: ..."
//     if (!*line) break;                          // the end of the input
//     use((*line)->spec);
//   }
class JobLineReader {
 public:
  JobLineReader(std::istream& in, JobJsonOptions options);

  // The next job; nullopt at the end of the input. A bad line (or one longer
  // than kMaxJobLineBytes) is kInvalidArgument "line N: <reason>"; the
  // reader should not be used after an error.
  Result<std::optional<JobLine>> Next();
  // Lines read so far, blank ones included.
  int64_t lines_read() const { return line_; }

 private:
  std::istream& in_;
  JobJsonOptions options_;
  int64_t line_ = 0;
};

}  // namespace warden
