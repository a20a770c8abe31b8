// A JobSpec in the forms people write one, for the round-trip properties of
// the add_args and batch_line targets: as `warden add` flags (AsArgs) and
// as a job object of `warden add --batch` (AsJobObject); Same compares
// every field.
#pragma once

#include <string>
#include <vector>

#include "warden/duration.h"
#include "warden/warden.h"

namespace warden::fuzz {

inline std::string Describe(const std::vector<std::string>& args) {
  std::string out = "warden add";
  for (const std::string& a : args) out += " '" + a + "'";
  return out;
}

// `spec` as `warden add` flags, in a form no flag parser can misread.
inline std::vector<std::string> AsArgs(const JobSpec& s) {
  std::vector<std::string> args = {
      "--queue=" + s.queue,
      "--priority=" + std::to_string(s.priority),
      "--max-attempts=" + std::to_string(s.max_attempts),
      "--max-crashes=" + std::to_string(s.max_crashes),
      std::string("--retry=") + RetryPolicyName(s.retry),
      "--timeout=" + FormatDuration(s.timeout),
      // --at and --delay exclude each other, even --delay=0ms.
      s.run_at ? "--at=" + FormatTime(*s.run_at) : "--delay=" + FormatDuration(s.delay)};
  if (s.delivery == Delivery::kAtMostOnce) args.push_back("--at-most-once");
  if (s.lease) args.push_back("--lease=" + FormatDuration(*s.lease));
  if (s.start_deadline) args.push_back("--start-deadline=" + FormatDuration(*s.start_deadline));
  if (!s.unique_key.empty()) args.push_back("--unique-key=" + s.unique_key);
  if (!s.concurrency_key.empty()) args.push_back("--concurrency-key=" + s.concurrency_key);
  if (!s.command.empty()) args.push_back("--cmd=" + s.command);
  args.insert(args.end(), {"--", s.task, s.payload.dump()});
  return args;
}

// `spec` as a job object, every field given.
inline Json AsJobObject(const JobSpec& s) {
  Json j = {{"task", s.task},
            {"payload", s.payload},
            {"queue", s.queue},
            {"priority", s.priority},
            {"max_attempts", s.max_attempts},
            {"max_crashes", s.max_crashes},
            {"retry", RetryPolicyName(s.retry)},
            {"timeout", FormatDuration(s.timeout)},
            {"at_most_once", s.delivery == Delivery::kAtMostOnce},
            {"unique_key", s.unique_key},
            {"concurrency_key", s.concurrency_key},
            {"cmd", s.command}};
  if (s.run_at) {
    j["at"] = FormatTime(*s.run_at);
  } else {
    j["delay"] = FormatDuration(s.delay);
  }
  if (s.lease) j["lease"] = FormatDuration(*s.lease);
  if (s.start_deadline) j["start_deadline"] = FormatDuration(*s.start_deadline);
  return j;
}

inline bool Same(const JobSpec& a, const JobSpec& b) {
  return a.queue == b.queue && a.task == b.task && a.payload == b.payload &&
         a.command == b.command && a.priority == b.priority && a.delay == b.delay &&
         a.max_attempts == b.max_attempts && a.retry == b.retry && a.delivery == b.delivery &&
         a.timeout == b.timeout && a.lease == b.lease && a.start_deadline == b.start_deadline &&
         a.unique_key == b.unique_key && a.concurrency_key == b.concurrency_key &&
         a.max_crashes == b.max_crashes && a.run_at == b.run_at;
}

}  // namespace warden::fuzz
