#include "warden/job_json.h"

#include <climits>
#include <utility>

#include "warden/did_you_mean.h"
#include "warden/duration.h"
#include "warden/text.h"

namespace warden {
namespace {

// A value from outside, quoted in an error: compact JSON, one short line.
std::string Shown(const Json& v) { return OneLine(JsonText(v), 40); }

// "an array", "a string", "null": what a JSON value is, for an error.
std::string Kind(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_array() || v.is_object()) return std::string("an ") + v.type_name();
  if (v.is_boolean()) return "true or false";
  return std::string("a ") + v.type_name();
}

Status WrongType(const std::string& field, const std::string& want, const Json& v) {
  return InvalidArgument(field + ": must be " + want + ", not " +
                         (v.is_string() || v.is_number() ? Shown(v) : Kind(v)));
}

Result<std::string> String(const std::string& field, const Json& v) {
  if (!v.is_string()) return WrongType(field, "a string", v);
  return v.get<std::string>();
}

Result<int> Integer(const std::string& field, const Json& v, int64_t min, int64_t max) {
  if (!v.is_number_integer()) return WrongType(field, "an integer", v);
  // nlohmann reads a non-negative number as unsigned: 0 included.
  bool in_range;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    in_range = u <= static_cast<uint64_t>(max) && (min <= 0 || u >= static_cast<uint64_t>(min));
  } else {
    const int64_t i = v.get<int64_t>();
    in_range = i >= min && i <= max;
  }
  if (!in_range) {
    return InvalidArgument(field + ": " + Shown(v) + " is not in range " + std::to_string(min) +
                           " to " + std::to_string(max));
  }
  return static_cast<int>(v.get<int64_t>());
}

Result<Millis> DurationField(const std::string& field, const Json& v) {
  if (!v.is_string()) return WrongType(field, "a duration string such as \"30s\" or \"1h30m\"", v);
  auto d = ParseDuration(v.get<std::string>());
  if (!d.has_value()) return d.error().Annotate(field);
  return d;
}

// `warden add`'s ranges for --max-attempts and --max-crashes.
constexpr int64_t kMaxBudget = 1'000'000;

// Sets the field `name` of `spec` from `v` (not null).
Status Apply(const std::string& name, const Json& v, const JobJsonOptions& options, JobSpec& spec) {
  if (name == "task") {
    WARDEN_ASSIGN_OR_RETURN(spec.task, String(name, v));
  } else if (name == "payload") {
    spec.payload = v;
  } else if (name == "cmd") {
    if (!options.allow_commands) {
      return InvalidArgument("cmd: command jobs are not accepted here");
    }
    WARDEN_ASSIGN_OR_RETURN(spec.command, String(name, v));
  } else if (name == "queue") {
    WARDEN_ASSIGN_OR_RETURN(spec.queue, String(name, v));
  } else if (name == "priority") {
    WARDEN_ASSIGN_OR_RETURN(spec.priority, Integer(name, v, INT_MIN, INT_MAX));
  } else if (name == "delay") {
    WARDEN_ASSIGN_OR_RETURN(spec.delay, DurationField(name, v));
    spec.run_at.reset();
  } else if (name == "at") {
    if (!v.is_string())
      return WrongType(name, "an RFC 3339 time such as \"2026-11-26T09:00:00Z\"", v);
    auto at = ParseTime(v.get<std::string>());
    if (!at.has_value()) return at.error().Annotate(name);
    if (options.now && *at - *options.now > kMaxDuration.count()) {
      return InvalidArgument("at: " + FormatTime(*at) + " is more than 365d from now, the limit");
    }
    spec.run_at = *at;
    spec.delay = Millis(0);
  } else if (name == "timeout") {
    WARDEN_ASSIGN_OR_RETURN(spec.timeout, DurationField(name, v));
  } else if (name == "lease") {
    WARDEN_ASSIGN_OR_RETURN(spec.lease, DurationField(name, v));
  } else if (name == "start_deadline") {
    WARDEN_ASSIGN_OR_RETURN(spec.start_deadline, DurationField(name, v));
  } else if (name == "unique_key") {
    WARDEN_ASSIGN_OR_RETURN(spec.unique_key, String(name, v));
  } else if (name == "concurrency_key") {
    WARDEN_ASSIGN_OR_RETURN(spec.concurrency_key, String(name, v));
  } else if (name == "max_attempts") {
    WARDEN_ASSIGN_OR_RETURN(spec.max_attempts, Integer(name, v, 1, kMaxBudget));
  } else if (name == "max_crashes") {
    WARDEN_ASSIGN_OR_RETURN(spec.max_crashes, Integer(name, v, 1, kMaxBudget));
  } else if (name == "retry") {
    const auto retry = v.is_string() ? ParseRetryPolicy(v.get<std::string>()) : std::nullopt;
    if (!retry) return WrongType(name, "\"none\", \"default\" or \"forever\"", v);
    spec.retry = *retry;
  } else if (name == "at_most_once") {
    if (!v.is_boolean()) return WrongType(name, "true or false", v);
    spec.delivery = v.get<bool>() ? Delivery::kAtMostOnce : Delivery::kAtLeastOnce;
  } else {
    const std::string shown = "\"" + OneLine(name, 40) + "\"";
    const std::string guess = Closest(name, JobJsonFields());
    if (!guess.empty()) {
      return InvalidArgument("unknown field " + shown + "; did you mean \"" + guess + "\"?");
    }
    std::string known;
    for (const std::string& f : JobJsonFields()) known += (known.empty() ? "" : ", ") + f;
    return InvalidArgument("unknown field " + shown + " (the fields: " + known + ")");
  }
  return Status::Ok();
}

bool Blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

const std::vector<std::string>& JobJsonFields() {
  static const std::vector<std::string> fields = {
      "task",           "cmd",          "queue",       "unique_key",  "concurrency_key", "payload",
      "priority",       "max_attempts", "max_crashes", "delay",       "timeout",         "lease",
      "start_deadline", "at",           "retry",       "at_most_once"};
  return fields;
}

Result<JobSpec> JobSpecFromJson(const Json& job, const JobJsonOptions& options) {
  if (!job.is_object()) {
    return InvalidArgument("a job is a JSON object ({\"task\": ...}), not " + Kind(job));
  }
  if (job.contains("delay") && job.contains("at") && !job["delay"].is_null() &&
      !job["at"].is_null()) {
    return InvalidArgument("give \"delay\" or \"at\", not both");
  }
  JobSpec spec = options.defaults;
  for (const auto& [name, value] : job.items()) {
    if (value.is_null() && name != "payload") continue;  // the default
    WARDEN_RETURN_IF_ERROR(Apply(name, value, options, spec));
  }
  if (spec.task.empty()) {
    if (spec.command.empty()) return InvalidArgument("give \"task\", or \"cmd\" (a shell command)");
    spec.task = "command";
  }
  WARDEN_RETURN_IF_ERROR(ValidateSpec(spec));
  return spec;
}

Result<JobSpec> JobSpecFromJsonText(std::string_view text, const JobJsonOptions& options) {
  auto job = ParseJsonText(text);
  if (!job.has_value()) return InvalidArgument("the job " + job.error().message());
  return JobSpecFromJson(*job, options);
}

JobLineReader::JobLineReader(std::istream& in, JobJsonOptions options)
    : in_(in), options_(std::move(options)) {}

Result<std::optional<JobLine>> JobLineReader::Next() {
  std::streambuf* buf = in_.rdbuf();
  while (true) {
    JobLine line;
    bool any = false;
    for (int c = buf->sbumpc(); c != std::char_traits<char>::eof(); c = buf->sbumpc()) {
      any = true;
      if (c == '\n') break;
      if (line.text.size() == kMaxJobLineBytes) {
        return InvalidArgument("line " + std::to_string(line_ + 1) + ": longer than " +
                               std::to_string(kMaxJobLineBytes) + " bytes, the limit");
      }
      line.text.push_back(static_cast<char>(c));
    }
    if (!any) return std::optional<JobLine>();
    line.number = ++line_;
    if (Blank(line.text)) continue;
    auto spec = JobSpecFromJsonText(line.text, options_);
    if (!spec.has_value()) return spec.error().Annotate("line " + std::to_string(line.number));
    line.spec = std::move(spec).value();
    return std::optional<JobLine>(std::move(line));
  }
}

}  // namespace warden
