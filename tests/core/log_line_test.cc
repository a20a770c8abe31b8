// The JSON log line (warden/log.h): key order, escaping, what it leaves out.
#include <gtest/gtest.h>

#include "warden/duration.h"
#include "warden/log.h"

namespace warden {
namespace {

constexpr TimeMs kNow = 1795000000123;

TEST(JsonLogLine, IsOneObjectOnOneLineWithTheKeysInOrder) {
  LogRecord r{LogLevel::kWarn, "job 42 (t) attempt 1: error after 1s", 42,
              {{"task", "t"}, {"attempt", 1}}};
  const std::string line = JsonLogLine(r, {{"worker", "box-1"}, {"worker_id", 7}}, kNow, 99);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(line.rfind("{\"time\":\"", 0), 0u) << line;
  const Json j = Json::parse(line);
  EXPECT_EQ(j["time"], FormatTime(kNow));
  EXPECT_EQ(j["level"], "warn");
  EXPECT_EQ(j["pid"], 99);
  EXPECT_EQ(j["worker"], "box-1");
  EXPECT_EQ(j["worker_id"], 7);
  EXPECT_EQ(j["job"], 42);
  EXPECT_EQ(j["message"], "job 42 (t) attempt 1: error after 1s");
  EXPECT_EQ(j["task"], "t");
  EXPECT_EQ(j["attempt"], 1);
  // time, level, pid, then who, job, message, then the facts.
  size_t at = 0;
  for (const char* key : {"\"time\"", "\"level\"", "\"pid\"", "\"worker\"", "\"worker_id\"",
                          "\"job\"", "\"message\"", "\"attempt\"", "\"task\""}) {
    const size_t found = line.find(key, at);
    ASSERT_NE(found, std::string::npos) << key << " in " << line;
    at = found;
  }
}

TEST(JsonLogLine, LeavesOutTheJobWhenThereIsNoneAndNeverLetsFieldsOverrideItsKeys) {
  LogRecord r{LogLevel::kInfo, "started", 0,
              {{"time", "x"}, {"level", "x"}, {"message", "x"}, {"job", 5}, {"worker", "x"},
               {"extra", true}}};
  const Json j = Json::parse(JsonLogLine(r, {{"worker", "w"}}, kNow, 1));
  EXPECT_FALSE(j.contains("job"));
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["message"], "started");
  EXPECT_EQ(j["worker"], "w");
  EXPECT_EQ(j["extra"], true);
  EXPECT_EQ(j.size(), 6u) << j.dump();
}

TEST(JsonLogLine, AnyBytesInTheMessageMakeOneLineOfValidJson) {
  const std::string nasty =
      std::string("line\nbreak \r\t \"quote\" \\ \x01 \xff\xfe caf\xc3\xa9 ") +
      std::string(1, '\0') + " end";
  LogRecord r{LogLevel::kError, nasty, 3, {{"stderr", nasty}}};
  const std::string line = JsonLogLine(r, Json::object(), kNow, 1);
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  const Json j = Json::parse(line);
  const std::string message = j["message"];
  EXPECT_NE(message.find("line\nbreak"), std::string::npos);
  EXPECT_NE(message.find("\xEF\xBF\xBD"), std::string::npos) << "U+FFFD for the bad bytes";
  EXPECT_NE(message.find("caf\xc3\xa9"), std::string::npos);
  EXPECT_NE(message.find(" end"), std::string::npos);
}

TEST(LogFormatNames, RoundTrip) {
  for (LogFormat f : {LogFormat::kText, LogFormat::kJson}) {
    EXPECT_EQ(ParseLogFormat(LogFormatName(f)), f);
  }
  EXPECT_FALSE(ParseLogFormat("JSON").has_value());
  EXPECT_FALSE(ParseLogFormat("").has_value());
}

}  // namespace
}  // namespace warden
