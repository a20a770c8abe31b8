// Shared by the bad-input tests (docs/bad-input.md lists each row and the
// test that proves it): run the `warden` binary against any database with
// any stdin, check the one-line error shape, compare files byte for byte,
// and mount file systems (tmpfs, read-only bind mounts) for the rows that
// need a real full or read-only disk.
//
// Mounts need root. Without it a test skips with a message, except under
// CI=true, where it fails (CI runs as root and must run every row). Each
// test process first moves into a mount namespace of its own when it can,
// so a mount left by a crashed test dies with the process; teardown
// unmounts in any case.
//
// Thread safety: none; one test thread drives everything.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness.h"
#include "warden/warden.h"

namespace bi {

using wt::CliResult;
using wt::Json;
using wt::Millis;

// "warden: <one line>\n" and nothing else on stderr; with `contains`, the
// line must contain it.
::testing::AssertionResult OneLineError(const CliResult& r, const std::string& contains = "");

std::string Bytes(const std::string& path);  // a file's content ("" if none)
void WriteBytes(const std::string& path, const std::string& data);
bool Exists(const std::string& path);
// sqlite3_open + `sql` + close; "" or the error.
std::string SqliteExec(const std::string& path, const std::string& sql);
// The first column of the first row of `sql` ("error: ..." if it fails).
std::string SqliteQuery(const std::string& path, const std::string& sql);

// A file system mounted for one test; unmounted (lazily if busy) on
// destruction.
class Mount {
 public:
  static std::unique_ptr<Mount> Tmpfs(const std::string& dir, const std::string& size,
                                      std::string* error);
  // `target` (a directory or a file) shows `source` read-only.
  static std::unique_ptr<Mount> ReadOnlyBind(const std::string& source, const std::string& target,
                                             std::string* error);
  ~Mount();
  const std::string& target() const { return target_; }
  // Unmounts now; lazily (detached, freed when the last file closes) if a
  // process still has files open on it.
  void Unmount();

 private:
  explicit Mount(std::string target) : target_(std::move(target)) {}
  std::string target_;
  bool mounted_ = true;
};

class BadInputTest : public wt::IntegrationTest {
 protected:
  void TearDown() override;

  // `warden --db DB ARGS...` with stdin from `stdin_path` (default
  // /dev/null). Waits up to `timeout`.
  CliResult Warden(const std::string& db, const std::vector<std::string>& args,
                   const std::string& stdin_path = "", Millis timeout = Millis(60'000));
  // With WARDEN_BAD_INPUT_LOG=DIR (ctest sets it: tests/bad_input/
  // CMakeLists.txt), Warden() appends each run (test name, argv, exit
  // status, stderr) as one JSON line to DIR/PID.jsonl, and TearDown whether
  // the test was skipped; from them check_doc.py proves that every message
  // docs/bad-input.md quotes is one warden still prints, with the exit
  // status the table says.
  static void LogRun(const std::vector<std::string>& argv, const CliResult& r);
  static void Log(Json record);  // adds the test's name
  // Every CLI command a user might try first on a database: each must fail
  // the same way on a file warden cannot use.
  static std::vector<std::vector<std::string>> EveryKindOfCommand();

  // Mounts need root (and CAP_SYS_ADMIN). False, with the test skipped or
  // (CI) failed, when they are not available.
  bool RequireMounts();
  // Owned by the test: unmounted in TearDown after every process we started
  // is gone, before the test's directory is removed.
  Mount* Keep(std::unique_ptr<Mount> m);

 private:
  std::vector<std::unique_ptr<Mount>> mounts_;
  int run_seq_ = 0;
};

}  // namespace bi
