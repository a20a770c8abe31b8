// Row "read-only database file / directory" of docs/bad-input.md. Root
// ignores file modes, so the tests make them read-only for real with a
// read-only bind mount (needs root: skipped elsewhere, failed under CI).
//  - a read-only directory: SQLite cannot create the -wal and -shm files
//    beside the database, so nothing can open it: every command fails;
//  - a read-only file in a writable directory: reads work, every write
//    fails with one line naming the file.
// Either way nothing changes in the file, and nothing is lost.
//
// SQLite only: a file system's flags mean nothing to a PostgreSQL client
// (a read-only server is the server's state: see vanish_test.cc).
#include <filesystem>

#include "bad_input.h"

namespace bi {
namespace {

using warden::StatusCode;

class ReadOnlyTest : public BadInputTest {
 protected:
  // A checkpointed database with 3 jobs in `dir`/jobs.db; returns its bytes.
  std::string MakeDatabase(const std::string& dir) {
    std::filesystem::create_directories(dir);
    {
      auto c = warden::Client::Open(dir + "/jobs.db");
      EXPECT_TRUE(c.has_value()) << c.error().ToString();
      if (!c.has_value()) return "";
      for (int i = 0; i < 3; ++i) {
        warden::JobSpec s;
        s.task = "t";
        s.payload = {{"i", i}};
        EXPECT_TRUE((*c)->Enqueue(s).has_value());
      }
    }
    EXPECT_FALSE(Exists(dir + "/jobs.db-wal"));
    return Bytes(dir + "/jobs.db");
  }
};

TEST_P(ReadOnlyTest, ReadOnlyDirectoryRefusesEveryCommandAndChangesNothing) {
  if (!RequireMounts()) return;
  const std::string src = dir() + "/data", ro = dir() + "/ro";
  const std::string bytes = MakeDatabase(src);
  std::filesystem::create_directories(ro);
  std::string error;
  auto m = Mount::ReadOnlyBind(src, ro, &error);
  ASSERT_TRUE(m) << error;
  Keep(std::move(m));

  const std::string path = ro + "/jobs.db";
  for (const auto& args : EveryKindOfCommand()) {
    CliResult r = Warden(path, args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
    EXPECT_TRUE(OneLineError(r, "cannot use database '" + path + "'")) << args[0];
    EXPECT_TRUE(OneLineError(r, "(it is on a read-only file system)")) << args[0];
  }
  auto c = warden::Client::Open(path);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Bytes(src + "/jobs.db") == bytes);
  EXPECT_FALSE(Exists(src + "/jobs.db-wal") || Exists(src + "/jobs.db-shm"));
}

TEST_P(ReadOnlyTest, ReadOnlyFileAllowsReadsAndRefusesEveryWrite) {
  if (!RequireMounts()) return;
  const std::string data = dir() + "/data", path = data + "/jobs.db";
  const std::string bytes = MakeDatabase(data);
  std::string error;
  auto m = Mount::ReadOnlyBind(path, path, &error);  // the file over itself
  ASSERT_TRUE(m) << error;
  Mount* mount = Keep(std::move(m));

  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"init"}, {"stats"}, {"jobs"}, {"jobs", "show", "1"}, {"workers"}}) {
    CliResult r = Warden(path, args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << " reads only: " << r.err;
  }
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"add", "t", "{}"},
           {"add", "--cmd", "true"},
           {"jobs", "cancel", "1"},
           {"worker", "--allow-cmd", "--exit-when-idle"}}) {
    CliResult r = Warden(path, args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
    EXPECT_TRUE(OneLineError(r, "attempt to write a readonly database ('" + path +
                                    "' or its file system is read-only)"))
        << args[0];
  }
  warden::JobSpec s;
  s.task = "t";
  auto c = warden::Client::Open(path);
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  auto r = (*c)->Enqueue(s);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kUnavailable);
  EXPECT_EQ((*c)->CountUnfinished().value(), 3);
  c->reset();

  mount->Unmount();
  EXPECT_TRUE(Bytes(path) == bytes) << "the file changed";
  auto after = warden::Client::Open(path);
  ASSERT_TRUE(after.has_value()) << after.error().ToString();
  EXPECT_EQ((*after)->CountUnfinished().value(), 3) << "nothing lost, nothing added";
}

INSTANTIATE_TEST_SUITE_P(Backends, ReadOnlyTest, ::testing::Values(wt::Backend::kSqlite),
                         wt::BackendName);

}  // namespace
}  // namespace bi
