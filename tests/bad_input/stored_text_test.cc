// Row "stored text that is neither JSON nor UTF-8, or nests too deep" of
// docs/bad-input.md: what a damaged or hand-edited database may hold in a
// job's payload, checkpoint, result or key columns. Every command still
// shows the job (exit 0, valid JSON with --json), and a worker still runs
// it. Before, `warden jobs show` aborted (uncaught type_error.316 from a
// strict dump()), and a 100,000-deep payload overflowed the stack of any
// process that read it.
//
// SQLite only: PostgreSQL refuses text that is not UTF-8 and checks what
// its json columns hold, so only a SQLite file (which stores whatever it is
// given) can hold such text.
#include <signal.h>

#include "bad_input.h"

namespace bi {
namespace {

using warden::JobState;

class StoredTextTest : public BadInputTest {};

TEST_P(StoredTextTest, JobsShowAndWorkersSurviveStoredTextThatIsNotJsonNorUtf8) {
  const int64_t bad = Add(Job("log ran"));
  const int64_t deep = Add(Job("log ran"));
  ASSERT_GT(bad, 0);
  ASSERT_GT(deep, 0);
  // "caf\xe9 {": neither JSON nor UTF-8. 100,000 nested arrays: valid JSON,
  // far deeper than the 512 levels warden accepts.
  ASSERT_EQ(SqliteExec(db(), "UPDATE jobs SET payload = CAST(X'636166e9207b' AS TEXT), "
                             "checkpoint = CAST(X'ff7b' AS TEXT), "
                             "result = CAST(X'22e922' AS TEXT), "
                             "unique_key = CAST(X'6bff' AS TEXT) WHERE id = " +
                                 std::to_string(bad)),
            "");
  ASSERT_EQ(SqliteExec(db(), "UPDATE jobs SET payload = "
                             "replace(hex(zeroblob(100000)), '00', '[') || "
                             "replace(hex(zeroblob(100000)), '00', ']') WHERE id = " +
                                 std::to_string(deep)),
            "");
  const std::string fffd = "\xef\xbf\xbd";  // U+FFFD

  CliResult text = Warden(db(), {"jobs", "show", std::to_string(bad)});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("payload:   \"caf" + fffd + " {\""), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("checkpoint: \"" + fffd + "{\""), std::string::npos) << text.out;
  Json shown = Show(bad);
  EXPECT_EQ(shown["payload"], "caf" + fffd + " {");
  EXPECT_EQ(shown["checkpoint"], fffd + "{");
  EXPECT_EQ(shown["result"], "\"" + fffd + "\"");
  EXPECT_EQ(shown["unique_key"], "k" + fffd);

  shown = Show(deep);
  ASSERT_TRUE(shown["payload"].is_string()) << "kept as its text, not parsed 100,000 deep";
  EXPECT_EQ(shown["payload"].get<std::string>().size(), 200'000u);
  CliResult list = Cli({"jobs"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_TRUE(list.json.is_array() && list.json.size() == 2) << list.out.substr(0, 300);
  // The API reads them too (a deep copy would have overflowed the stack).
  auto job = GetJob(deep);
  ASSERT_TRUE(job);
  EXPECT_TRUE(job->payload.is_string());

  // A worker runs both (the payload, a JSON string now, is the command's
  // stdin; the checkpoint its WARDEN_CHECKPOINT) and lives on.
  wt::Worker& w = StartWorker("w");
  ASSERT_TRUE(wt::WaitFor([&] { return JobInState(bad, JobState::kSucceeded); })) << w.Log();
  ASSERT_TRUE(wt::WaitFor([&] { return JobInState(deep, JobState::kSucceeded); })) << w.Log();
  EXPECT_EQ(LedgerFor(bad, "ran").size(), 1u);
  EXPECT_EQ(LedgerFor(deep, "ran").size(), 1u);
  EXPECT_EQ(kill(w.pid(), 0), 0) << "the worker is still running";
}

TEST_P(StoredTextTest, JobsShowJsonPrintsAStderrTailThatIsNotUtf8) {
  // A command's stderr is kept as bytes (SQLite stores them as they are).
  // `jobs show --json` aborted on them (type_error.316 in a strict dump()).
  const int64_t id = Add(Job("printf 'bad \\377 bytes\\n' >&2; exit 3"), {"--retry", "none"});
  ASSERT_GT(id, 0);
  StartWorker("w");
  ASSERT_TRUE(wt::WaitFor([&] { return JobInState(id, JobState::kDead); }));
  const Json shown = Show(id);
  ASSERT_EQ(shown["attempts"].size(), 1u) << shown.dump(2);
  EXPECT_EQ(shown["attempts"][0]["error"]["stderr_tail"], "bad \xef\xbf\xbd bytes\n");
  CliResult text = Cli({"jobs", "show", std::to_string(id)}, /*json=*/false);
  EXPECT_EQ(text.exit_code, 0) << text.err;
}

INSTANTIATE_TEST_SUITE_P(Backends, StoredTextTest, ::testing::Values(wt::Backend::kSqlite),
                         wt::BackendName);

}  // namespace
}  // namespace bi
