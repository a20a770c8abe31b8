// The job object of `warden add --batch` (and of the HTTP API's batch):
// JobSpecFromJson, JobSpecFromJsonText and JobLineReader
// (include/warden/job_json.h). No database, no processes.
#include "warden/job_json.h"

#include <gtest/gtest.h>

#include <sstream>

#include "warden/duration.h"
#include "warden/text.h"

namespace warden {
namespace {

// An error: kInvalidArgument, one line of at most 300 bytes, saying `says`.
void ExpectRefused(const Result<JobSpec>& r, const std::string& says) {
  ASSERT_FALSE(r.has_value()) << "accepted; expected: " << says;
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << r.error().ToString();
  EXPECT_NE(r.error().message().find(says), std::string::npos) << r.error().message();
  EXPECT_LE(r.error().message().size(), 300u) << r.error().message();
  EXPECT_EQ(OneLine(r.error().message(), 1000), r.error().message()) << "one printable line";
}

Result<JobSpec> FromText(const std::string& text, const JobJsonOptions& options = {}) {
  return JobSpecFromJsonText(text, options);
}

TEST(JobJson, EveryFieldIsTheFlagOfTheSameName) {
  auto spec = FromText(R"({"task": "email", "payload": {"to": "a@example.com"}, "queue": "mail",
      "priority": -3, "delay": "1h30m", "timeout": "1m", "lease": "20s",
      "start_deadline": "2m", "unique_key": "u", "concurrency_key": "c", "max_attempts": 9,
      "max_crashes": 2, "retry": "forever", "at_most_once": true, "cmd": "echo hi"})");
  ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
  EXPECT_EQ(spec->task, "email");
  EXPECT_EQ(spec->payload, Json({{"to", "a@example.com"}}));
  EXPECT_EQ(spec->queue, "mail");
  EXPECT_EQ(spec->priority, -3);
  EXPECT_EQ(spec->delay, Millis(90 * 60'000));
  EXPECT_FALSE(spec->run_at.has_value());
  EXPECT_EQ(spec->timeout, Millis(60'000));
  EXPECT_EQ(spec->lease, Millis(20'000));
  EXPECT_EQ(spec->start_deadline, Millis(120'000));
  EXPECT_EQ(spec->unique_key, "u");
  EXPECT_EQ(spec->concurrency_key, "c");
  EXPECT_EQ(spec->max_attempts, 9);
  EXPECT_EQ(spec->max_crashes, 2);
  EXPECT_EQ(spec->retry, RetryPolicy::kForever);
  EXPECT_EQ(spec->delivery, Delivery::kAtMostOnce);
  EXPECT_EQ(spec->command, "echo hi");

  auto at = FromText(R"({"task": "t", "at": "2026-11-26T10:00:00+01:00"})");
  ASSERT_TRUE(at.has_value()) << at.error().ToString();
  EXPECT_EQ(at->run_at, ParseTime("2026-11-26T09:00:00Z").value());
  // Every field the header lists, and no other.
  EXPECT_EQ(JobJsonFields().size(), 16u);
}

TEST(JobJson, WhatALineLeavesOutComesFromTheDefaults) {
  JobJsonOptions options;
  options.defaults.queue = "bulk";
  options.defaults.task = "resize";
  options.defaults.priority = 7;
  options.defaults.timeout = Millis(5'000);
  auto spec = FromText(R"({"payload": [1], "priority": null})", options);
  ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
  EXPECT_EQ(spec->task, "resize");
  EXPECT_EQ(spec->queue, "bulk");
  EXPECT_EQ(spec->priority, 7) << "null is the default";
  EXPECT_EQ(spec->timeout, Millis(5'000));
  EXPECT_EQ(spec->payload, Json::array({1}));
  // A line's own value wins; a payload of null is the payload null.
  spec = FromText(R"({"task": "t", "queue": "q", "payload": null})", options);
  ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
  EXPECT_EQ(spec->queue, "q");
  EXPECT_TRUE(spec->payload.is_null());
  // No payload: {} as `warden add TASK` stores.
  spec = FromText(R"({"task": "t"})");
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->payload, Json::object());
}

TEST(JobJson, DelayAndAtAreOneSetting) {
  JobJsonOptions later;
  later.defaults.delay = Millis(60'000);
  auto spec = FromText(R"({"task": "t", "at": "2026-01-01T00:00:00Z"})", later);
  ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
  EXPECT_EQ(spec->delay, Millis(0)) << "the line's at replaces the default delay";
  EXPECT_TRUE(spec->run_at.has_value());

  JobJsonOptions at;
  at.defaults.run_at = 1'000;
  spec = FromText(R"({"task": "t", "delay": "5s"})", at);
  ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
  EXPECT_FALSE(spec->run_at.has_value()) << "the line's delay replaces the default at";
  EXPECT_EQ(spec->delay, Millis(5'000));

  ExpectRefused(FromText(R"({"task": "t", "delay": "0s", "at": "2026-01-01T00:00:00Z"})"),
                "give \"delay\" or \"at\", not both");
}

TEST(JobJson, AtMoreThanAYearAheadIsRefusedWhenNowIsGiven) {
  JobJsonOptions options;
  options.now = ParseTime("2026-01-01T00:00:00Z").value();
  ExpectRefused(FromText(R"({"task": "t", "at": "2062-01-01T00:00:00Z"})", options),
                "at: 2062-01-01T00:00:00.000Z is more than 365d from now, the limit");
  EXPECT_TRUE(FromText(R"({"task": "t", "at": "2026-12-01T00:00:00Z"})", options).has_value());
  EXPECT_TRUE(FromText(R"({"task": "t", "at": "2062-01-01T00:00:00Z"})").has_value())
      << "no now, no ceiling";
}

TEST(JobJson, ACommandJobIsTaskCommandUnlessNamed) {
  auto spec = FromText(R"({"cmd": "make deploy"})");
  ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
  EXPECT_EQ(spec->task, "command");
  EXPECT_EQ(spec->command, "make deploy");
  JobJsonOptions no_commands;
  no_commands.allow_commands = false;
  ExpectRefused(FromText(R"({"cmd": "make deploy"})", no_commands),
                "cmd: command jobs are not accepted here");
  // A default command, and a line that turns it off.
  JobJsonOptions command;
  command.defaults.command = "python3 send.py";
  spec = FromText(R"({"payload": {"n": 1}})", command);
  ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
  EXPECT_EQ(spec->command, "python3 send.py");
  EXPECT_EQ(spec->task, "command");
  ExpectRefused(FromText(R"({"cmd": ""})", command), "give \"task\", or \"cmd\"");
  ExpectRefused(FromText(R"({})"), "give \"task\", or \"cmd\" (a shell command)");
}

TEST(JobJson, UnknownFieldsAreRefusedByName) {
  ExpectRefused(FromText(R"({"task": "t", "queu": "q"})"),
                "unknown field \"queu\"; did you mean \"queue\"?");
  ExpectRefused(FromText(R"({"task": "t", "max-attempts": 3})"),
                "unknown field \"max-attempts\"; did you mean \"max_attempts\"?");
  ExpectRefused(FromText(R"({"task": "t", "colour": "red"})"),
                "unknown field \"colour\" (the fields: task, cmd, queue, ");
  ExpectRefused(FromText("{\"task\": \"t\", \"a\\nb\": 1}"), "unknown field \"a b\"");
}

TEST(JobJson, WrongTypesAndValuesSayWhichFieldAndWhy) {
  ExpectRefused(FromText(R"({"task": 5})"), "task: must be a string, not 5");
  ExpectRefused(FromText(R"({"task": "t", "priority": "high"})"),
                "priority: must be an integer, not \"high\"");
  ExpectRefused(FromText(R"({"task": "t", "priority": 1.5})"),
                "priority: must be an integer, not 1.5");
  ExpectRefused(FromText(R"({"task": "t", "priority": 99999999999})"),
                "priority: 99999999999 is not in range -2147483648 to 2147483647");
  ExpectRefused(FromText(R"({"task": "t", "priority": 18446744073709551615})"),
                "priority: 18446744073709551615 is not in range");
  ExpectRefused(FromText(R"({"task": "t", "max_attempts": 0})"),
                "max_attempts: 0 is not in range 1 to 1000000");
  ExpectRefused(FromText(R"({"task": "t", "max_crashes": 1000001})"),
                "max_crashes: 1000001 is not in range 1 to 1000000");
  ExpectRefused(FromText(R"({"task": "t", "retry": "sometimes"})"),
                "retry: must be \"none\", \"default\" or \"forever\", not \"sometimes\"");
  ExpectRefused(FromText(R"({"task": "t", "at_most_once": "yes"})"),
                "at_most_once: must be true or false, not \"yes\"");
  ExpectRefused(FromText(R"({"task": "t", "delay": 30})"),
                "delay: must be a duration string such as \"30s\" or \"1h30m\", not 30");
  ExpectRefused(FromText(R"({"task": "t", "timeout": "soon"})"),
                "timeout: invalid duration 'soon'");
  ExpectRefused(FromText(R"({"task": "t", "lease": "400d"})"), "lease: invalid duration '400d'");
  ExpectRefused(FromText(R"({"task": "t", "at": "tomorrow"})"), "at: invalid time 'tomorrow'");
  ExpectRefused(FromText(R"({"task": "t", "queue": ["a"]})"),
                "queue: must be a string, not an array");
  ExpectRefused(FromText(R"({"task": "t", "unique_key": {}})"),
                "unique_key: must be a string, not an object");
}

TEST(JobJson, TheClientsChecksApply) {
  ExpectRefused(FromText(R"({"task": "t", "queue": ""})"), "queue must not be empty");
  ExpectRefused(FromText(R"({"task": "t", "queue": "a,b"})"), "queue must not contain ','");
  ExpectRefused(FromText(R"({"task": "t", "lease": "500ms"})"), "lease must be at least 1s");
  ExpectRefused(FromText(R"({"task": "t", "timeout": "0s"})"), "timeout must be positive");
  ExpectRefused(FromText(R"({"task": ")" + std::string(201, 'x') + R"("})"),
                "task is longer than 200 bytes");
  ExpectRefused(FromText(R"({"task": "t\u0001"})"), "task must not contain NUL or other control");
  const std::string big = R"({"task": "t", "payload": ")" + std::string(kMaxPayloadBytes, 'x') +
                          R"("})";
  ExpectRefused(FromText(big), "payload is 1048578 bytes; the limit is 1048576");
}

TEST(JobJson, ALineThatIsNotOneJsonObjectIsRefused) {
  ExpectRefused(FromText(R"([{"task": "t"}])"),
                "a job is a JSON object ({\"task\": ...}), not an array");
  ExpectRefused(FromText(R"("t")"), "not a string");
  ExpectRefused(FromText("42"), "not a number");
  ExpectRefused(FromText("null"), "not null");
  ExpectRefused(FromText(R"({"task": "t")"), "the job is not valid JSON: {\"task\": \"t\"");
  ExpectRefused(FromText(R"({"task": "t"} {"task": "u"})"), "the job is not valid JSON");
  ExpectRefused(FromText("{\"task\": \"caf\xe9\"}"), "the job is not valid JSON: not UTF-8");
  ExpectRefused(FromText(std::string(600, '[') + std::string(600, ']')),
                "the job nests deeper than 512 levels");
}

// The lines of `text`, read to the end: the specs, or the first error.
Result<std::vector<JobLine>> ReadAll(const std::string& text, const JobJsonOptions& options = {}) {
  std::istringstream in(text);
  JobLineReader reader(in, options);
  std::vector<JobLine> out;
  while (true) {
    auto line = reader.Next();
    if (!line.has_value()) return line.error();
    if (!*line) return out;
    out.push_back(std::move(**line));
  }
}

TEST(JobLineReader, SkipsBlankLinesAndCountsEveryLine) {
  auto lines = ReadAll("\n{\"task\": \"a\"}\r\n  \t\n{\"task\": \"b\"}\n\n{\"task\": \"c\"}");
  ASSERT_TRUE(lines.has_value()) << lines.error().ToString();
  ASSERT_EQ(lines->size(), 3u);
  EXPECT_EQ((*lines)[0].number, 2);
  EXPECT_EQ((*lines)[0].spec.task, "a");
  EXPECT_EQ((*lines)[0].text, "{\"task\": \"a\"}\r");
  EXPECT_EQ((*lines)[1].number, 4);
  EXPECT_EQ((*lines)[2].number, 6) << "the last line needs no line break";
  EXPECT_EQ((*lines)[2].spec.task, "c");

  lines = ReadAll("");
  ASSERT_TRUE(lines.has_value());
  EXPECT_TRUE(lines->empty());
  lines = ReadAll("\n \n");
  ASSERT_TRUE(lines.has_value());
  EXPECT_TRUE(lines->empty());
}

TEST(JobLineReader, ABadLineIsNamedByItsNumber) {
  auto lines = ReadAll("{\"task\": \"a\"}\n\n{\"task\": \"b\", \"priority\": \"x\"}\n{bad\n");
  ASSERT_FALSE(lines.has_value());
  EXPECT_EQ(lines.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(lines.error().message(), "line 3: priority: must be an integer, not \"x\"");
  lines = ReadAll("{\"task\": \"a\"}\n[1, 2]\n");
  ASSERT_FALSE(lines.has_value());
  EXPECT_EQ(lines.error().message(),
            "line 2: a job is a JSON object ({\"task\": ...}), not an array");
  lines = ReadAll("{bad\n");
  ASSERT_FALSE(lines.has_value());
  EXPECT_EQ(lines.error().message(), "line 1: the job is not valid JSON: {bad");
}

TEST(JobLineReader, ALineLongerThanTheLimitIsRefusedWithoutReadingItAll) {
  std::string text = "{\"task\": \"t\"}\n{\"task\": \"t\", \"payload\": \"" +
                     std::string(kMaxJobLineBytes, 'x') + "\"}\n";
  auto lines = ReadAll(text);
  ASSERT_FALSE(lines.has_value());
  EXPECT_EQ(lines.error().message(), "line 2: longer than 2097152 bytes, the limit");
  // A payload at the limit fits in a line.
  text = "{\"task\": \"t\", \"payload\": \"" + std::string(kMaxPayloadBytes - 2, 'x') + "\"}";
  lines = ReadAll(text);
  ASSERT_TRUE(lines.has_value()) << lines.error().ToString();
  EXPECT_EQ(lines->size(), 1u);
}

}  // namespace
}  // namespace warden
