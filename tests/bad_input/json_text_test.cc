// Unit tests of the shared checks behind the bad-input rows on JSON and
// names (docs/bad-input.md): ParseJsonText (payloads, and the `checkpoint`
// / `result` lines of command jobs), ParseStoredJson (what a store hands
// back), OneLine (outside text quoted in an error) and ValidateSpec's name
// rules. No database, no processes.
#include <gtest/gtest.h>

#include "warden/text.h"
#include "warden/lists.h"
#include "warden/client.h"

namespace warden {
namespace {

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

void ExpectInvalid(const Result<Json>& r, const std::string& says) {
  ASSERT_FALSE(r.has_value()) << says;
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find(says), std::string::npos) << r.error().message();
  for (const char c : r.error().message()) {
    ASSERT_FALSE(static_cast<unsigned char>(c) < 0x20) << r.error().message();
  }
  EXPECT_LE(r.error().message().size(), 160u) << r.error().message();
  EXPECT_EQ(InvalidUtf8At(r.error().message()), std::string::npos) << r.error().message();
}

TEST(ParseJsonText, AcceptsOneValidDocument) {
  EXPECT_EQ(ParseJsonText(R"( {"a": [1, "x"]} )").value(), Json::parse(R"({"a":[1,"x"]})"));
  EXPECT_EQ(ParseJsonText("42").value(), Json(42));
  EXPECT_EQ(ParseJsonText("\"caf\xc3\xa9\"").value(), Json("caf\xc3\xa9"));
  // Brackets inside strings do not count as nesting.
  const std::string in_string = "\"" + std::string(1000, '[') + "\\\"[\"";
  EXPECT_TRUE(ParseJsonText(in_string).has_value());
}

TEST(ParseJsonText, DepthLimitIsSharedAndCheckedWithoutRecursion) {
  EXPECT_EQ(kMaxJsonDepth, 512);
  EXPECT_TRUE(ParseJsonText(Nested(kMaxJsonDepth)).has_value());
  ExpectInvalid(ParseJsonText(Nested(kMaxJsonDepth + 1)), "nests deeper than 512 levels");
  ExpectInvalid(ParseJsonText("{\"a\":" + Nested(600) + "}"), "nests deeper than 512 levels");
  // 1,000,000 levels (2 MB): refused before anything parses or recurses.
  ExpectInvalid(ParseJsonText(Nested(1'000'000)), "nests deeper than 512 levels");
  ExpectInvalid(ParseJsonText(std::string(1'000'000, '{')), "nests deeper than 512 levels");
}

TEST(ParseJsonText, RefusesMalformedTextOnOneLine) {
  ExpectInvalid(ParseJsonText("{bad"), "is not valid JSON: {bad");
  ExpectInvalid(ParseJsonText("{\n  \"a\": 1,\n"), "is not valid JSON: {   \"a\": 1,");
  ExpectInvalid(ParseJsonText("{} {}"), "is not valid JSON");
  ExpectInvalid(ParseJsonText("\"\\ud800\""), "is not valid JSON");
  ExpectInvalid(ParseJsonText(""), "is not valid JSON: the text is empty");
  ExpectInvalid(ParseJsonText(" \n"), "is not valid JSON: the text is empty");
  // The parser stops at a NUL byte; nothing after one may be dropped.
  ExpectInvalid(ParseJsonText(std::string("{\"a\":\0}", 7)),
                "is not valid JSON: a NUL byte at byte 5");
  ExpectInvalid(ParseJsonText(std::string("1\0junk", 6)),
                "is not valid JSON: a NUL byte at byte 1");
  ExpectInvalid(ParseJsonText(std::string("\"a\"\0", 4)), "a NUL byte at byte 3");
  // A long document is quoted in part.
  ExpectInvalid(ParseJsonText("[" + std::string(10'000, '1') + ",]"), "...");
}

TEST(ParseJsonText, RefusesTextThatIsNotUtf8) {
  ExpectInvalid(ParseJsonText("\"caf\xe9\""), "is not valid JSON: not UTF-8 at byte 4 (0xe9)");
  ExpectInvalid(ParseJsonText("\xff\xfe{}"), "not UTF-8 at byte 0 (0xff)");
  ExpectInvalid(ParseJsonText("\"\xc0\xaf\""), "not UTF-8 at byte 1");      // overlong '/'
  ExpectInvalid(ParseJsonText("\"\xed\xa0\x80\""), "not UTF-8 at byte 1");  // a surrogate
  ExpectInvalid(ParseJsonText("\"\xf4\x90\x80\x80\""), "not UTF-8");        // past U+10FFFF
}

TEST(Utf8, InvalidUtf8AtAndValidUtf8) {
  EXPECT_EQ(InvalidUtf8At("plain"), std::string::npos);
  EXPECT_EQ(InvalidUtf8At("\xe2\x82\xac \xf0\x9f\x98\x80"), std::string::npos);  // euro, emoji
  EXPECT_EQ(InvalidUtf8At("ab\xe2\x82"), 2u);                                    // cut short
  EXPECT_EQ(InvalidUtf8At("a\x80"), 1u);
  EXPECT_EQ(ValidUtf8("caf\xe9!"), "caf\xef\xbf\xbd!");
  EXPECT_EQ(ValidUtf8("ok \xc3\xa9"), "ok \xc3\xa9");
}

TEST(OneLine, QuotesOutsideTextOnOneShortLine) {
  EXPECT_EQ(OneLine("a\nb\r\tc", 40), "a b  c");
  EXPECT_EQ(OneLine(std::string("x\0y\x1b\x7f", 5), 40), "x?y??");
  EXPECT_EQ(OneLine("\xff\xc3\xa9", 40), "?\xc3\xa9");
  EXPECT_EQ(OneLine("a\xc2\x85" "b\xe2\x80\xa8" "c", 40), "a?b c");  // NEL, LINE SEPARATOR
  EXPECT_EQ(OneLine(std::string(100, 'x'), 10), std::string(10, 'x') + "...");
  // Never cuts a character in two.
  EXPECT_EQ(OneLine("ab\xc3\xa9", 3), "ab...");
}

TEST(ParseStoredJson, NeverThrowsAndAlwaysDumps) {
  EXPECT_TRUE(ParseStoredJson("").is_null());
  EXPECT_EQ(ParseStoredJson("{\"a\":1}"), Json({{"a", 1}}));
  EXPECT_EQ(ParseStoredJson("not json"), Json("not json"));
  // Text after a NUL byte is kept, not cut off by the parser.
  const std::string with_nul("0\0\0rest", 7);
  EXPECT_EQ(ParseStoredJson(with_nul), Json(with_nul));
  // Neither JSON nor UTF-8: a string with U+FFFD, which a strict dump()
  // (`warden jobs show`, a command job's stdin) can write. It threw
  // type_error.316 and aborted `warden jobs show`.
  const Json latin1 = ParseStoredJson("caf\xe9");
  EXPECT_EQ(latin1, Json("caf\xef\xbf\xbd"));
  EXPECT_NO_THROW((void)latin1.dump());
  // Deeper than the limit: kept as its text, so nothing recurses that deep.
  const std::string deep = Nested(200'000);
  const Json kept = ParseStoredJson(deep);
  ASSERT_TRUE(kept.is_string());
  EXPECT_EQ(kept.get<std::string>(), deep);
  EXPECT_EQ(ParseStoredJson(Nested(kMaxJsonDepth)), Json::parse(Nested(kMaxJsonDepth)));
  // What it returns stores again (JsonText) and reads back the same.
  for (const Json& j : {latin1, kept}) EXPECT_EQ(ParseStoredJson(JsonText(j)), j);
}

// A valid spec (task `t`) with `field` set to `value`.
JobSpec Named(std::string JobSpec::*field, const std::string& value) {
  JobSpec s;
  s.task.push_back('t');  // (assigning "t" trips a false -Wrestrict in g++ 12)
  s.*field = value;
  return s;
}

void ExpectRefused(const JobSpec& s, const std::string& says) {
  const Status st = ValidateSpec(s);
  ASSERT_FALSE(st.ok()) << says;
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find(says), std::string::npos) << st.message();
  for (const char c : st.message()) ASSERT_FALSE(static_cast<unsigned char>(c) < 0x20);
  EXPECT_EQ(InvalidUtf8At(st.message()), std::string::npos) << st.message();
}

TEST(ValidateSpecNames, RefusesNamesNoWorkerCanServe) {
  // `warden worker --queues a,b` splits at commas (SplitList): no worker
  // started from the command line could ever claim from queue "a,b".
  ASSERT_EQ(SplitList("a,b").size(), 2u);
  ExpectRefused(Named(&JobSpec::queue, "a,b"), "queue must not contain ','");
  // `--task NAME=COMMAND` splits at the first '='.
  ExpectRefused(Named(&JobSpec::task, "a=b"), "task must not contain '='");
  // Fine elsewhere: a key may hold either; a task a comma (claims match it
  // exactly), a queue an '='.
  EXPECT_TRUE(ValidateSpec(Named(&JobSpec::unique_key, "a,b=c")).ok());
  EXPECT_TRUE(ValidateSpec(Named(&JobSpec::task, "a,b")).ok());
  EXPECT_TRUE(ValidateSpec(Named(&JobSpec::queue, "x=y")).ok());
  EXPECT_TRUE(ValidateSpec(Named(&JobSpec::queue, "caf\xc3\xa9 queue")).ok());
}

TEST(ValidateSpecNames, RefusesNulControlBytesAndInvalidUtf8) {
  for (auto field : {&JobSpec::task, &JobSpec::queue, &JobSpec::unique_key,
                     &JobSpec::concurrency_key}) {
    // PostgreSQL cuts text at NUL: "k\0a" and "k\0b" would be one key there.
    ExpectRefused(Named(field, std::string("k\0a", 3)), "must not contain NUL or other control");
    ExpectRefused(Named(field, "line\nbreak"), "must not contain NUL or other control");
    ExpectRefused(Named(field, "del\x7f"), "control characters: 'del?'");
    // PostgreSQL refuses it at insert; SQLite would store it.
    ExpectRefused(Named(field, "caf\xe9"), "is not valid UTF-8 (byte 3): 'caf?'");
  }
  ExpectRefused(Named(&JobSpec::command, std::string("echo\0x", 6)),
                "command must not contain NUL");
  ExpectRefused(Named(&JobSpec::command, "echo \xff"), "command is not valid UTF-8 (byte 5)");
  // A command is shell text: line breaks and tabs are fine.
  EXPECT_TRUE(ValidateSpec(Named(&JobSpec::command, "set -e\n\techo ok")).ok());
}

TEST(ValidateSpecNames, RefusesCharactersThatDoNotShowNamingTheCodePoint) {
  const std::vector<std::pair<std::string, std::string>> hidden = {
      {"ma\u200Bil", "U+200B (a zero-width character"},
      {"ma\u200Cil", "U+200C (a zero-width character"},
      {"ma\u200Dil", "U+200D (a zero-width character"},
      {"ma\u2060il", "U+2060 (a zero-width character"},
      {"\uFEFFmail", "U+FEFF (a zero-width character"},
      {"ma\u200Eil", "U+200E (a direction mark"},
      {"\u202Eliam", "U+202E (a direction embedding or override"},
      {"a\u202Ab", "U+202A (a direction embedding or override"},
      {"a\u2066b", "U+2066 (a direction isolate"},
      {"a\u2069b", "U+2069 (a direction isolate"},
      {"a\u0085b", "U+0085 (a C1 control character"},
      {"a\u009Fb", "U+009F (a C1 control character"},
  };
  for (auto field : {&JobSpec::task, &JobSpec::queue, &JobSpec::unique_key,
                     &JobSpec::concurrency_key}) {
    for (const auto& [name, says] : hidden) ExpectRefused(Named(field, name), says);
  }
  EXPECT_EQ(ValidateQueueName("ma\u200Bil").message(),
            "queue must not contain U+200B (a zero-width character, which does not show): "
            "'ma<U+200B>il'");
  // Their neighbours are fine: U+00A0, U+200A, U+2010, U+2070, U+FEFE and
  // any character above U+FFFF.
  for (const char* ok : {"a\u00A0b", "a\u200Ab", "a\u2010b", "a\u2070b", "a\uFEFEb",
                         "caf\u00E9", "\U0001F600"}) {
    EXPECT_TRUE(ValidateQueueName(ok).ok()) << ok;
  }
}

}  // namespace
}  // namespace warden
