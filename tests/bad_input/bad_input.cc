#include "bad_input.h"

#include <sched.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "pg_test_db.h"

namespace bi {

::testing::AssertionResult OneLineError(const CliResult& r, const std::string& contains) {
  const size_t nl = r.err.find('\n');
  if (r.err.rfind("warden: ", 0) != 0 || nl == std::string::npos || nl + 1 != r.err.size()) {
    return ::testing::AssertionFailure() << "stderr is not one 'warden: ' line: [" << r.err << "]";
  }
  if (!contains.empty() && r.err.find(contains) == std::string::npos) {
    return ::testing::AssertionFailure() << "stderr lacks [" << contains << "]: " << r.err;
  }
  return ::testing::AssertionSuccess();
}

std::string Bytes(const std::string& path) { return wt::ReadFile(path); }

void WriteBytes(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::string SqliteExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string error;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    error = db ? sqlite3_errmsg(db) : "cannot open";
  } else {
    sqlite3_busy_timeout(db, 10'000);
    char* msg = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
      error = msg ? msg : "error";
    }
    sqlite3_free(msg);
  }
  sqlite3_close(db);
  return error;
}

std::string SqliteQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    out = std::string("error: ") + (db ? sqlite3_errmsg(db) : "cannot open");
  } else {
    sqlite3_busy_timeout(db, 10'000);
    sqlite3_stmt* q = nullptr;
    int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &q, nullptr);
    if (rc == SQLITE_OK) rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
      out = text ? text : "";
    } else {
      out = std::string("error: ") + sqlite3_errmsg(db);
    }
    sqlite3_finalize(q);
  }
  sqlite3_close(db);
  return out;
}

// ---- Mount ----

std::unique_ptr<Mount> Mount::Tmpfs(const std::string& dir, const std::string& size,
                                    std::string* error) {
  const std::string opts = "size=" + size + ",mode=0755";
  if (mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0) {
    *error = "mount -t tmpfs " + dir + ": " + std::strerror(errno);
    return nullptr;
  }
  return std::unique_ptr<Mount>(new Mount(dir));
}

std::unique_ptr<Mount> Mount::ReadOnlyBind(const std::string& source, const std::string& target,
                                           std::string* error) {
  if (mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    *error = "mount --bind " + source + " " + target + ": " + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<Mount> m(new Mount(target));
  // A bind mount takes read-only only from a remount.
  if (mount(nullptr, target.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
    *error = "mount -o remount,ro,bind " + target + ": " + std::strerror(errno);
    return nullptr;  // ~Mount unmounts the writable bind
  }
  return m;
}

Mount::~Mount() { Unmount(); }

void Mount::Unmount() {
  if (!mounted_) return;
  mounted_ = false;
  for (int i = 0; i < 50; ++i) {
    if (umount2(target_.c_str(), 0) == 0) return;
    if (errno != EBUSY) break;
    std::this_thread::sleep_for(Millis(20));  // a retry's back-off, not a wait for a state
  }
  if (umount2(target_.c_str(), MNT_DETACH) != 0) {
    std::cerr << "[ bad-input] could not unmount " << target_ << ": " << std::strerror(errno)
              << "\n";
  }
}

// ---- BadInputTest ----

void BadInputTest::TearDown() {
  // Whether this test ran: check_doc.py tells a message no run printed from
  // one whose test was skipped (no PostgreSQL, not root).
  Log({{"skipped", IsSkipped()}});
  // Processes first: a worker with files open on a mount keeps it busy.
  wt::KillAllDescendants();
  for (auto it = mounts_.rbegin(); it != mounts_.rend(); ++it) (*it)->Unmount();
  mounts_.clear();
  wt::IntegrationTest::TearDown();
}

CliResult BadInputTest::Warden(const std::string& db, const std::vector<std::string>& args,
                               const std::string& stdin_path, Millis timeout) {
  std::vector<std::string> argv;
  if (!stdin_path.empty()) {
    argv = {"/bin/sh", "-c", "exec \"$@\" < \"$0\"", stdin_path};
  }
  argv.insert(argv.end(), {WARDEN_BIN, "--db", db});
  argv.insert(argv.end(), args.begin(), args.end());
  CliResult r = wt::RunToExit(argv, dir() + "/run-" + std::to_string(++run_seq_), timeout);
  LogRun(argv, r);
  return r;
}

void BadInputTest::LogRun(const std::vector<std::string>& argv, const CliResult& r) {
  Json shown_argv = Json::array();
  for (const std::string& a : argv) shown_argv.push_back(a.size() > 200 ? a.substr(0, 200) : a);
  Log({{"argv", shown_argv},
       {"exit", r.exit_code},
       {"stderr", r.err.size() > 4096 ? r.err.substr(0, 4096) : r.err}});
}

void BadInputTest::Log(Json record) {
  const char* log_dir = std::getenv("WARDEN_BAD_INPUT_LOG");
  if (log_dir == nullptr || *log_dir == '\0') return;
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  record["test"] = info ? std::string(info->test_suite_name()) + "." + info->name() : "";
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  // One file per test process (ctest runs them in parallel), a line a record.
  std::ofstream(std::string(log_dir) + "/" + std::to_string(getpid()) + ".jsonl", std::ios::app)
      << record.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
}

std::vector<std::vector<std::string>> BadInputTest::EveryKindOfCommand() {
  return {{"init"},  {"add", "t", "{}"},        {"add", "--cmd", "true"}, {"stats"},
          {"jobs"},  {"jobs", "show", "1"},     {"workers"},              {"sweep"},
          {"worker", "--allow-cmd", "--exit-when-idle"}};
}

bool BadInputTest::RequireMounts() {
  auto cannot = [](const std::string& why) {
    if (warden::testing::InCi()) {
      ADD_FAILURE() << why << " (CI=true: this row must run; CI runs the tests as root)";
    } else {
      GTEST_SKIP() << why;
    }
  };
  if (geteuid() != 0) {
    cannot("needs root to mount a tmpfs or a read-only bind mount");
    return false;
  }
  // Once per process: later mounts are then ours alone and vanish with us.
  // Fails in a multi-threaded process (TSan has a thread): mounts are then
  // shared with the host, and only teardown removes them.
  static const bool private_ns = [] {
    if (unshare(CLONE_NEWNS) != 0) return false;
    return mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
  }();
  (void)private_ns;
  std::string probe_error;
  const std::string probe = dir() + "/mount-probe";
  if (mkdir(probe.c_str(), 0755) != 0) {
    cannot("cannot make " + probe + ": " + std::strerror(errno));
    return false;
  }
  if (auto m = Mount::Tmpfs(probe, "64k", &probe_error); !m) {
    cannot("cannot mount here: " + probe_error);
    return false;
  }
  rmdir(probe.c_str());
  return true;
}

Mount* BadInputTest::Keep(std::unique_ptr<Mount> m) {
  mounts_.push_back(std::move(m));
  return mounts_.back().get();
}

}  // namespace bi
