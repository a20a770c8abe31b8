// ParseAddArgs (the `warden add` flags without a database), the inputs the
// fuzzers found worth keeping, and FormatDuration's exactness. Built in the
// fuzz tree because core_test does not link the CLI; run by fuzz/run.sh.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/cli.h"
#include "warden/duration.h"

namespace warden::cli {
namespace {

Result<JobSpec> Parse(const std::vector<std::string>& args, const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  return ParseAddArgs(args, in);
}

void ExpectRefused(const Result<JobSpec>& r, const std::string& part) {
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find(part), std::string::npos) << r.error().message();
  EXPECT_EQ(r.error().message().find('\n'), std::string::npos) << r.error().message();
}

TEST(ParseAddArgs, TaskAndPayloadWithDefaults) {
  auto r = Parse({"resize", R"({"image": "a.png"})"});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->task, "resize");
  EXPECT_EQ(r->payload, Json({{"image", "a.png"}}));
  EXPECT_EQ(r->queue, "default");
  EXPECT_EQ(r->max_attempts, 5);
  EXPECT_EQ(r->timeout, Millis(30 * 60 * 1000));
  EXPECT_FALSE(r->lease.has_value());
}

TEST(ParseAddArgs, EveryFlag) {
  auto r = Parse({"--cmd", "make deploy", "--queue", "q", "--priority", "-3", "--delay", "1.5s",
                  "--max-attempts", "7", "--max-crashes", "2", "--retry", "forever",
                  "--at-most-once", "--timeout", "10m", "--lease", "5s", "--unique-key", "u",
                  "--concurrency-key", "c", "--start-deadline", "1h", "--json", "--db", "x.db"});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->task, "command");
  EXPECT_EQ(r->command, "make deploy");
  EXPECT_EQ(r->queue, "q");
  EXPECT_EQ(r->priority, -3);
  EXPECT_EQ(r->delay, Millis(1500));
  EXPECT_EQ(r->max_attempts, 7);
  EXPECT_EQ(r->max_crashes, 2);
  EXPECT_EQ(r->retry, RetryPolicy::kForever);
  EXPECT_EQ(r->delivery, Delivery::kAtMostOnce);
  EXPECT_EQ(r->timeout, Millis(600'000));
  EXPECT_EQ(r->lease, Millis(5000));
  EXPECT_EQ(r->unique_key, "u");
  EXPECT_EQ(r->concurrency_key, "c");
  EXPECT_EQ(r->start_deadline, Millis(3'600'000));
}

TEST(ParseAddArgs, AtIsAnAbsoluteTimeExclusiveWithDelay) {
  auto r = Parse({"t", "--at", "2026-11-26T10:00:00+01:00"});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->run_at, std::optional<TimeMs>(1'795'683'600'000));
  EXPECT_EQ(r->delay, Millis(0));
  EXPECT_FALSE(Parse({"t"})->run_at.has_value());
  ExpectRefused(Parse({"t", "--at", "2026-11-26T10:00:00"}),
                "--at: invalid time '2026-11-26T10:00:00': missing the offset");
  ExpectRefused(Parse({"t", "--at", "2026-11-26T10:00:00Z", "--delay", "1s"}), "--delay");
  EXPECT_TRUE(Parse({"t", "--wait", "--wait-timeout", "1h30m"}).has_value());
}

TEST(ParseAddArgs, IntegersAreDecimal) {
  auto r = Parse({"t", "--priority", "-010", "--max-attempts", "010", "--max-crashes", "+0002"});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->priority, -10);  // CLI11 alone reads octal: -8
  EXPECT_EQ(r->max_attempts, 10);
  EXPECT_EQ(r->max_crashes, 2);
  EXPECT_EQ(Parse({"t", "--priority", "0"})->priority, 0);
  ExpectRefused(Parse({"t", "--priority", "0x10"}), "--priority: '0x10' is not a decimal integer");
  ExpectRefused(Parse({"t", "--max-attempts", "0b11"}), "not a decimal integer");
  ExpectRefused(Parse({"t", "--max-attempts", "-"}), "not a decimal integer");
  ExpectRefused(Parse({"t", "--max-attempts", "0010000000"}), "not in range");
}

TEST(ParseAddArgs, DashReadsThePayloadFromTheStream) {
  auto r = Parse({"t", "-"}, "{\n  \"a\": [1, 2]\n}\n");
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->payload, Json({{"a", {1, 2}}}));
}

TEST(ParseAddArgs, UsageErrorsAreOneLine) {
  ExpectRefused(Parse({}), "give a TASK");
  ExpectRefused(Parse({"t", "--no-such-flag"}), "no-such-flag");
  ExpectRefused(Parse({"t", "--priority", "high"}), "priority");
  ExpectRefused(Parse({"t", "--max-attempts", "0"}), "max-attempts");
  ExpectRefused(Parse({"t", "--retry", "sometimes"}), "--retry must be");
  ExpectRefused(Parse({"t", "--help"}), "help");
  ExpectRefused(Parse({"t", "--timeout", "10"}), "--timeout: invalid duration '10': missing unit");
  ExpectRefused(Parse({"t", "--lease", "1\n0s"}), "invalid duration '1?0s'");
  ExpectRefused(Parse({"t", "-"}, "{\n  \"a\": \n}"), "the payload is not valid JSON: {   \"a\"");
  ExpectRefused(Parse({"t", "--priority", "1\n2"}), "priority");
}

TEST(ParseAddArgs, PayloadDepthIsBounded) {
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  auto ok = Parse({"t", "-"}, nested(512));
  EXPECT_TRUE(ok.has_value()) << ok.error().ToString();
  ExpectRefused(Parse({"t", "-"}, nested(513)), "deeper than 512");
  // Deep enough to overflow the stack of a recursive dump(): refused, not a crash.
  ExpectRefused(Parse({"t", "-"}, nested(200'000)), "deeper than 512");
  ExpectRefused(Parse({"t", "-"}, "{\"a\":" + nested(600) + "}"), "deeper than 512");
}

TEST(ParseAddArgs, CommandTakesALoneJsonArgumentAsItsPayload) {
  // `add --cmd cat '{"a":1}'` used to enqueue task `{"a":1}`, payload {}.
  auto r = Parse({"--cmd", "cat", R"({"a":1})"});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->task, "command");
  EXPECT_EQ(r->payload, Json({{"a", 1}}));
  r = Parse({"--cmd", "cat", "-"}, " [1, 2]");
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->task, "command");
  EXPECT_EQ(r->payload, Json({1, 2}));
  r = Parse({"--cmd", "cat", "mytask", R"({"b":2})"});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->task, "mytask");
  EXPECT_EQ(r->payload, Json({{"b", 2}}));
  r = Parse({"--cmd", "cat", "42"});  // a task named 42, as documented
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->task, "42");
  EXPECT_EQ(r->payload, Json::object());
  // Anywhere else a payload where the task goes is refused.
  ExpectRefused(Parse({R"({"a":1})"}), "is a payload, not a task name");
  ExpectRefused(Parse({"-"}, "{}"), "'-' is a payload, not a task name");
  ExpectRefused(Parse({"--cmd", "cat", "[1]", "{}"}), "'[1]' is a payload");
}

TEST(ParseAddArgs, PayloadErrorsComeFromTheSharedParser) {
  ExpectRefused(Parse({"t", "-"}, "\"caf\xe9\""),
                "the payload is not valid JSON: not UTF-8 at byte 4 (0xe9)");
  ExpectRefused(Parse({"t", "-"}, ""), "the payload is not valid JSON: the text is empty");
  // An empty argument is an empty payload, refused like empty stdin (a
  // script's unset "$PAYLOAD" was stored as {}); no argument is none: {}.
  ExpectRefused(Parse({"t", ""}), "the payload is not valid JSON: the text is empty");
  ExpectRefused(Parse({"--cmd", "cat", "t", ""}), "the text is empty");
  auto none = Parse({"t"});
  ASSERT_TRUE(none.has_value()) << none.error().ToString();
  EXPECT_EQ(none->payload, Json::object());
  ExpectRefused(Parse({"t", "-"}, std::string(100'000, '{')), "the payload nests deeper than 512");
}

TEST(ParseAddArgs, OutsideTextInErrorsIsOneLine) {
  ExpectRefused(Parse({"t", "--no\nsuch"}), "--no such");
  ExpectRefused(Parse({"t", "--priority", "1\n2"}), "'1 2' is not a decimal integer");
  // Names are the Client's to check (ValidateSpec, as Enqueue does).
  auto r = Parse({"line\nbreak"});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(ValidateSpec(*r).message(),
            "task must not contain NUL or other control characters: 'line break'");
}

TEST(Duration, ExactDecimals) {
  EXPECT_EQ(ParseDuration("0.1s").value(), Millis(100));
  EXPECT_EQ(ParseDuration("1.0005s").value(), Millis(1001));  // half up
  EXPECT_EQ(ParseDuration("1.00049999999999999999s").value(), Millis(1000));
  EXPECT_EQ(ParseDuration(".5m").value(), Millis(30'000));
  EXPECT_EQ(ParseDuration("31536000000ms").value(), kMaxDuration);
  EXPECT_FALSE(ParseDuration("31536000001ms").has_value());
  EXPECT_FALSE(ParseDuration("2305843009213693952ms").has_value());
  EXPECT_FALSE(ParseDuration("99999999999999999999999s").has_value());
}

TEST(Duration, FormatReadsBack) {
  EXPECT_EQ(FormatDuration(Millis(250)), "250ms");
  EXPECT_EQ(FormatDuration(Millis(1500)), "1.5s");
  EXPECT_EQ(FormatDuration(Millis(1234)), "1.234s");     // was "1.23s"
  EXPECT_EQ(FormatDuration(Millis(61'234)), "61.234s");  // was "1.02m"
  EXPECT_EQ(FormatDuration(Millis(90'000)), "1.5m");
  EXPECT_EQ(FormatDuration(Millis(3'660'000)), "61m");
  EXPECT_EQ(FormatDuration(Millis(5'400'000)), "1.5h");
  EXPECT_EQ(FormatDuration(Millis(36'000'000'000'000)), "10000000h");  // was "1e+07h"
  EXPECT_EQ(FormatDuration(Millis(-1500)), "-1.5s");
  for (int64_t ms : {int64_t{0}, int64_t{999}, int64_t{1001}, int64_t{59'999},
                     int64_t{3'599'999}, int64_t{86'400'001}, kMaxDuration.count()}) {
    EXPECT_EQ(ParseDuration(FormatDuration(Millis(ms))).value(), Millis(ms)) << ms;
  }
}

}  // namespace
}  // namespace warden::cli
