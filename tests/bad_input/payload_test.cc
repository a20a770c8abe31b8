// Rows "malformed payload" and "oversized payload" of docs/bad-input.md:
// through `warden add` (argument and stdin) and through the Client API, on
// both backends. Refused input is a usage error (exit 2, kInvalidArgument)
// with one line, and nothing is stored; accepted input is stored exactly.
#include <sqlite3.h>

#include "bad_input.h"
#include "warden/sqlite.h"

namespace bi {
namespace {

using warden::StatusCode;

class PayloadTest : public BadInputTest {
 protected:
  int64_t Unfinished() {
    auto n = client().CountUnfinished();
    EXPECT_TRUE(n.has_value()) << n.error().ToString();
    return n.has_value() ? *n : -1;
  }
  // A file holding `text`, for stdin.
  std::string Stdin(const std::string& text) {
    const std::string path = dir() + "/stdin-" + std::to_string(++files_);
    WriteBytes(path, text);
    return path;
  }
  // `{"a":"xxx..."}`: exactly `bytes` long as compact JSON.
  static std::string PayloadOfSize(size_t bytes) {
    return "{\"a\":\"" + std::string(bytes - 8, 'x') + "\"}";
  }
  static Json Nested(int depth) {
    Json root = Json::array();
    Json* at = &root;
    for (int i = 1; i < depth; ++i) {
      at->push_back(Json::array());
      at = &(*at)[0];
    }
    return root;
  }
  static warden::JobSpec Spec(Json payload) {
    warden::JobSpec s;
    s.task = "t";
    s.payload = std::move(payload);
    return s;
  }

 private:
  int files_ = 0;
};

TEST_P(PayloadTest, MalformedJsonArgumentIsAUsageError) {
  for (const char* bad : {"{bad", "[1, 2", "{\"a\": 1,}", "{'a': 1}", "{} trailing",
                                 "\"\\ud800\"", "nul", "{\"a\":\x01}", "", " "}) {
    CliResult r = Warden(db(), {"add", "t", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_TRUE(OneLineError(r, "the payload is not valid JSON")) << bad;
    // Words for a person, not a status code's name ("invalid argument: ").
    EXPECT_EQ(r.err.rfind("warden: the payload is not valid JSON", 0), 0u) << r.err;
    EXPECT_EQ(r.out, "") << bad;
  }
  EXPECT_EQ(Unfinished(), 0);
}

TEST_P(PayloadTest, MalformedJsonOnStdinIsAUsageErrorOnOneLine) {
  const std::vector<std::string> bad = {
      "{\n  \"a\": 1,\n  \"b\": [\n",  // cut off, several lines
      "",                              // empty stdin
      std::string("\xff\xfe\x00\x01garbage", 11),
      "\xff garbage",  // not UTF-8, no NUL
      "{\"a\": 1}\n{\"b\": 2}\n",  // two documents
      std::string("{\"a\": 1}\0junk", 13),  // was stored as {"a": 1}, the rest dropped
  };
  for (const std::string& text : bad) {
    CliResult r = Warden(db(), {"add", "t", "-"}, Stdin(text));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(OneLineError(r, "the payload is not valid JSON")) << "stdin [" << text << "]";
  }
  EXPECT_EQ(Unfinished(), 0);
  // A good document over several lines is fine.
  CliResult r = Warden(db(), {"--json", "add", "t", "-"}, Stdin("{\n  \"a\": [1,\n 2]\n}\n"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto job = GetJob(r.json["id"].get<int64_t>());
  ASSERT_TRUE(job);
  EXPECT_EQ(job->payload, Json::parse(R"({"a": [1, 2]})"));
}

TEST_P(PayloadTest, DeeplyNestedPayloadIsRefusedNotACrash) {
  // 100,000 levels: 200 KB of text; storing it would recurse that deep.
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  CliResult r = Warden(db(), {"add", "t", "-"}, Stdin(deep));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(OneLineError(r, "nests deeper than 512 levels"));

  auto over = client().Enqueue(Spec(Nested(100'000)));
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(over.error().message().find("nests deeper than 512 levels"), std::string::npos)
      << over.error().ToString();
  EXPECT_FALSE(client().Enqueue(Spec(Nested(513))).has_value());
  auto at_limit = client().Enqueue(Spec(Nested(512)));
  ASSERT_TRUE(at_limit.has_value()) << at_limit.error().ToString();
  EXPECT_EQ(GetJob(at_limit->id)->payload, Nested(512));
  EXPECT_EQ(Unfinished(), 1);
}

TEST_P(PayloadTest, MalformedPayloadThroughTheApiIsInvalidArgument) {
  struct Case {
    const char* what;
    Json payload;
    const char* message;
  };
  const std::vector<Case> cases = {
      // What Json::parse(text, nullptr, false) returns for bad text.
      {"discarded parse", Json::parse("{bad", nullptr, false), "not valid JSON"},
      {"invalid UTF-8", Json{{"name", std::string("caf\xe9")}}, "not valid UTF-8"},
  };
  for (const Case& c : cases) {
    auto r = client().Enqueue(Spec(c.payload));
    ASSERT_FALSE(r.has_value()) << c.what;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(r.error().message().find(c.message), std::string::npos) << r.error().ToString();
    // A batch with one bad spec stores nothing.
    std::vector<warden::JobSpec> batch = {Spec(Json{{"ok", true}}), Spec(c.payload)};
    EXPECT_FALSE(client().EnqueueMany(batch).has_value()) << c.what;
    EXPECT_EQ(warden::ValidateSpec(Spec(c.payload)).code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(Unfinished(), 0);
}

TEST_P(PayloadTest, PayloadAtTheLimitIsStoredAndOneByteMoreIsRefused) {
  const size_t limit = warden::kMaxPayloadBytes;
  ASSERT_EQ(limit, 1u << 20) << "the documented limit is 1 MiB";
  const std::string at = PayloadOfSize(limit), over = PayloadOfSize(limit + 1);
  const std::string over_msg = "payload is " + std::to_string(limit + 1) +
                               " bytes; the limit is " + std::to_string(limit);

  // The CLI, through stdin: an argument this long is refused by the kernel
  // (128 KiB per argument) before warden runs.
  CliResult r = Warden(db(), {"--json", "add", "t", "-"}, Stdin(at));
  ASSERT_EQ(r.exit_code, 0) << r.err.substr(0, 300);
  auto job = GetJob(r.json["id"].get<int64_t>());
  ASSERT_TRUE(job);
  EXPECT_EQ(job->payload.dump().size(), limit);
  EXPECT_EQ(job->payload, Json::parse(at));
  r = Warden(db(), {"add", "t", "-"}, Stdin(over));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(OneLineError(r, over_msg));
  // The limit counts compact JSON: whitespace around it is free.
  r = Warden(db(), {"add", "t", "-"}, Stdin("\n  " + at + "  \n"));
  EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 300);

  // The API.
  auto ok = client().Enqueue(Spec(Json::parse(at)));
  ASSERT_TRUE(ok.has_value()) << ok.error().ToString();
  EXPECT_EQ(GetJob(ok->id)->payload, Json::parse(at));
  auto refused = client().Enqueue(Spec(Json::parse(over)));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message(), over_msg);
  std::vector<warden::JobSpec> batch = {Spec(Json::parse(at)), Spec(Json::parse(over))};
  EXPECT_FALSE(client().EnqueueMany(batch).has_value());
  EXPECT_EQ(Unfinished(), 3) << "only the three accepted jobs";
}

TEST_P(PayloadTest, CommandJobTakesALoneJsonArgumentAsItsPayload) {
  // `warden add --cmd 'SHELL' [TASK] [PAYLOAD]`: `add --cmd cat '{"a":1}'`
  // used to enqueue task `{"a":1}` with an empty payload.
  auto added = [&](const std::vector<std::string>& args, const std::string& stdin_text = "") {
    std::vector<std::string> all = {"--json", "add"};
    all.insert(all.end(), args.begin(), args.end());
    CliResult r = Warden(db(), all, stdin_text.empty() ? "" : Stdin(stdin_text));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? GetJob(r.json["id"].get<int64_t>()) : std::nullopt;
  };
  auto job = added({"--cmd", Job("log ran $(cat)"), R"({"a": 1})"});
  ASSERT_TRUE(job);
  EXPECT_EQ(job->task, "command");
  EXPECT_EQ(job->payload, Json({{"a", 1}}));
  const int64_t id = job->id;
  job = added({"--cmd", "cat", "-"}, "[1, 2]");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->task, "command");
  EXPECT_EQ(job->payload, Json({1, 2}));
  job = added({"--cmd", "cat", "mytask", R"({"b": 2})"});
  ASSERT_TRUE(job);
  EXPECT_EQ(job->task, "mytask");
  EXPECT_EQ(job->payload, Json({{"b", 2}}));
  job = added({"--cmd", "cat", "mytask"});
  ASSERT_TRUE(job);
  EXPECT_EQ(job->task, "mytask");
  EXPECT_EQ(job->payload, Json::object());
  // Without --cmd, a payload where the task goes is a usage error.
  CliResult r = Warden(db(), {"add", R"({"a": 1})"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(OneLineError(r, "is a payload, not a task name: give the task first"));
  // The command gets the payload on stdin.
  StartWorker("w");
  ASSERT_TRUE(wt::WaitFor([&] { return JobInState(id, warden::JobState::kSucceeded); }));
  const auto ran = LedgerFor(id, "ran");
  ASSERT_EQ(ran.size(), 1u);
  EXPECT_EQ(ran[0].args, std::vector<std::string>({"{\"a\":1}"}));
}

// SQLite only: enqueueing inside the application's own SQLite transaction
// (warden/sqlite.h) has no PostgreSQL counterpart in the C++ API.
class SqlitePayloadTest : public PayloadTest {};

TEST_P(SqlitePayloadTest, EnqueueInTheApplicationsTransactionChecksThePayloadToo) {
  ASSERT_GE(Unfinished(), 0);  // the schema exists
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(this->db().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  for (const Json& bad : {Json::parse("{bad", nullptr, false), Nested(600),
                          Json::parse(PayloadOfSize(warden::kMaxPayloadBytes + 1))}) {
    auto r = warden::EnqueueInSqliteTransaction(db, Spec(bad), 1000);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << r.error().ToString();
  }
  ASSERT_EQ(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(Unfinished(), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, PayloadTest, ::testing::ValuesIn(wt::AllBackends()),
                         wt::BackendName);
INSTANTIATE_TEST_SUITE_P(Backends, SqlitePayloadTest, ::testing::Values(wt::Backend::kSqlite),
                         wt::BackendName);

}  // namespace
}  // namespace bi
