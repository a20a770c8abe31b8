#include "harness.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "store/postgres/pg_conn.h"
#include "text.h"

namespace wt {

std::vector<Backend> AllBackends() { return {Backend::kSqlite, Backend::kPostgres}; }

const char* ToString(Backend b) { return b == Backend::kPostgres ? "postgres" : "sqlite"; }

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return ToString(info.param);
}

bool Worker::LogHas(const std::string& text) const { return Log().find(text) != std::string::npos; }

// ---- IntegrationTest ----

void IntegrationTest::SetUp() {
  // Orphans (shims, jobs of a killed worker) come to us, not to init, so
  // TearDown can find them all.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/warden-it-XXXXXX";
  ASSERT_NE(mkdtemp(templ.data()), nullptr) << std::strerror(errno);
  dir_ = templ;
  ledger_ = dir_ + "/ledger";
  if (postgres()) {
    WARDEN_REQUIRE_PG();
    if (!given_pg_url_.empty()) {
      db_ = given_pg_url_;
      // postgresql://user@host:port/NAME?options
      const size_t scheme = db_.find("://");
      const size_t path = db_.find('/', scheme == std::string::npos ? 0 : scheme + 3);
      pg_database_ = path == std::string::npos ? "" : db_.substr(path + 1);
      pg_database_ = pg_database_.substr(0, pg_database_.find('?'));
      return;
    }
    auto pg = warden::testing::PgTestDb::Create();
    ASSERT_TRUE(pg.has_value()) << pg.error().ToString();
    pg_db_ = std::move(pg).value();
    db_ = pg_db_->url();
    pg_database_ = pg_db_->name();
  } else {
    db_ = dir_ + "/jobs.db";
  }
}

void IntegrationTest::TearDown() {
  const bool failed = HasFailure();
  if (failed) DumpDiagnostics();
  client_.reset();
  KillAllDescendants();
  workers_.clear();
  KillAllDescendants();
  if (pg_db_ && failed) {
    std::cerr << "[ harness  ] dropping PostgreSQL database " << pg_db_->name() << "\n";
  }
  pg_db_.reset();  // every process that used it is gone
  if (!failed && !dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  } else if (!dir_.empty()) {
    std::cerr << "[ harness  ] kept " << dir_ << " for inspection\n";
  }
}

void IntegrationTest::DumpDiagnostics() {
  using warden::testing::Tail;
  for (const auto& w : workers_) {
    std::cerr << "----- worker " << w->name << " (pid " << w->pid() << ") stderr tail:\n"
              << Tail(w->Log(), 60);
  }
  std::cerr << "----- ledger tail:\n" << Tail(ReadFile(ledger_), 40) << "-----\n";
  std::cerr << "[ harness  ] backend " << ToString(backend()) << ", --db " << db_ << "\n";
}

std::vector<std::string> IntegrationTest::FastFlags(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::pair<std::string, std::string>> flags = {{"--heartbeat", "100ms"},
                                                            {"--lease", "1s"},
                                                            {"--keepalive-threshold", "1s"},
                                                            {"--sweep-interval", "100ms"},
                                                            {"--kill-grace", "200ms"}};
  for (const auto& [flag, value] : overrides) {
    auto it =
        std::find_if(flags.begin(), flags.end(), [&](const auto& f) { return f.first == flag; });
    if (it != flags.end())
      it->second = value;
    else
      flags.emplace_back(flag, value);
  }
  std::vector<std::string> out;
  for (const auto& [flag, value] : flags) {
    out.push_back(flag);
    out.push_back(value);
  }
  return out;
}

Worker& IntegrationTest::StartWorker(const std::string& name, std::vector<std::string> flags,
                                     int concurrency, bool wait_started,
                                     const std::vector<std::string>& wrapper) {
  if (flags.empty()) flags = FastFlags();
  std::vector<std::string> argv = wrapper;
  for (const std::string& arg :
       {std::string(WARDEN_BIN), std::string("--db"), db_, std::string("worker"),
        std::string("--allow-cmd"), std::string("--name"), name, std::string("--concurrency"),
        std::to_string(concurrency)}) {
    argv.push_back(arg);
  }
  argv.insert(argv.end(), flags.begin(), flags.end());
  return StartWorkerProcess(name, argv, wait_started);
}

Worker& IntegrationTest::StartWorkerProcess(const std::string& name,
                                            const std::vector<std::string>& argv,
                                            bool wait_started) {
  auto w = std::make_unique<Worker>();
  w->name = name;
  const std::string base = dir_ + "/worker-" + name + "-" + std::to_string(workers_.size());
  w->proc = Child::Spawn(argv, base + ".out", base + ".log");
  Worker& ref = *w;
  workers_.push_back(std::move(w));
  if (wait_started) {
    const bool up =
        PollUntil([&] { return ref.LogHas("started as worker") || ref.proc->Exited(); }, kDeadline);
    EXPECT_TRUE(up && !ref.proc->Exited()) << "worker " << name << " did not start; stderr:\n"
                                           << ref.Log();
  }
  return ref;
}

Worker* IntegrationTest::WorkerByPid(pid_t pid) {
  for (auto& w : workers_) {
    if (w->pid() == pid) return w.get();
  }
  return nullptr;
}

CliResult RunToExit(const std::vector<std::string>& argv, const std::string& base,
                    Millis timeout) {
  warden::testing::CmdResult ran = warden::testing::RunToExit(argv, base, timeout);
  if (ran.timed_out) {
    std::string command;
    for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
    ADD_FAILURE() << "`" << command << "` did not finish in " << timeout.count() << " ms";
  }
  CliResult r;
  r.exit_code = ran.exit_code;
  r.out = std::move(ran.out);
  r.err = std::move(ran.err);
  r.json = Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  return r;
}

void KillAllDescendants() {
  if (!warden::testing::KillAllDescendants()) {
    ADD_FAILURE() << "could not kill every process the test started";
  }
}

CliResult IntegrationTest::Cli(const std::vector<std::string>& args, bool json, Millis timeout) {
  std::vector<std::string> argv = {WARDEN_BIN, "--db", db_};
  if (json) argv.push_back("--json");
  argv.insert(argv.end(), args.begin(), args.end());
  return RunToExit(argv, dir_ + "/cli-" + std::to_string(++cli_seq_), timeout);
}

int64_t IntegrationTest::Add(const std::string& cmd, const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"add", "--cmd", cmd};
  args.insert(args.end(), flags.begin(), flags.end());
  CliResult r = Cli(args);
  if (r.exit_code != 0 || !r.json.is_object() || !r.json.contains("id")) {
    ADD_FAILURE() << "add failed (exit " << r.exit_code << "): " << r.err << r.out;
    return -1;
  }
  EXPECT_TRUE(r.json.value("created", false));
  return r.json["id"].get<int64_t>();
}

Json IntegrationTest::Show(int64_t id) {
  CliResult r = Cli({"jobs", "show", std::to_string(id)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.json.is_object()) << r.out;
  return r.json.is_object() ? r.json : Json::object();
}

Json IntegrationTest::Timeline(int64_t id) {
  CliResult r = Cli({"jobs", "timeline", std::to_string(id)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.json.is_object()) << r.out;
  return r.json.is_object() ? r.json : Json::object();
}

Json IntegrationTest::Workers() {
  CliResult r = Cli({"workers", "--all"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.json.is_array()) << r.out;
  return r.json.is_array() ? r.json : Json::array();
}

int64_t IntegrationTest::WorkerIdOf(pid_t pid) {
  for (const Json& w : Workers()) {
    if (w["pid"] == pid && (w["state"] == "active" || w["state"] == "draining")) {
      return w["id"].get<int64_t>();
    }
  }
  return -1;
}

Json IntegrationTest::WorkerRow(int64_t id) {
  for (const Json& w : Workers()) {
    if (w["id"] == id) return w;
  }
  return Json::object();
}

Json IntegrationTest::Stats() {
  CliResult r = Cli({"stats"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.json.is_object()) << r.out;
  return r.json.is_object() ? r.json : Json::object();
}

warden::Client& IntegrationTest::client() {
  if (!client_) {
    auto c = warden::Client::Open(db_);
    if (!c.has_value()) throw std::runtime_error("Client::Open: " + c.error().ToString());
    client_ = std::move(*c);
  }
  return *client_;
}

std::vector<int64_t> IntegrationTest::EnqueueMany(const std::vector<warden::JobSpec>& specs) {
  auto r = client().EnqueueMany(specs);
  EXPECT_TRUE(r.has_value()) << r.error().ToString();
  std::vector<int64_t> ids;
  if (r.has_value()) {
    for (const auto& e : *r) ids.push_back(e.id);
  }
  return ids;
}

std::optional<warden::JobInfo> IntegrationTest::GetJob(int64_t id) {
  auto j = client().GetJob(id);
  if (!j.has_value()) return std::nullopt;  // e.g. busy: the caller polls again
  return *j;
}

bool IntegrationTest::JobInState(int64_t id, warden::JobState s) {
  auto j = GetJob(id);
  return j && j->state == s;
}

pid_t IntegrationTest::HolderPid(int64_t id) {
  auto j = GetJob(id);
  if (!j || j->state != warden::JobState::kRunning || !j->worker) return -1;
  auto ws = client().ListWorkers();
  if (!ws.has_value()) return -1;
  for (const auto& w : *ws) {
    if (w.id == *j->worker) return w.pid;
  }
  return -1;
}

bool IntegrationTest::DatabaseWritable(Millis timeout) {
  if (postgres()) {
    auto c = warden::Client::Open(db_, timeout);
    return c.has_value() && (*c)->CheckWritable().ok();
  }
  sqlite3* db = nullptr;
  bool ok = sqlite3_open_v2(db_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK;
  if (ok) sqlite3_busy_timeout(db, static_cast<int>(timeout.count()));
  ok = ok && sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK;
  if (ok) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  return ok;
}

bool IntegrationTest::FreezeBetweenTransactions(Worker& w) {
  // A freeze that is given up must not last long enough to matter: well
  // below the point where the worker fences itself (3/4 of the tests' 1 s
  // lease), else on waking it would stop its jobs before the real freeze.
  // Another live worker's transactions last milliseconds.
  const Millis check(300);
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (!w.proc->Signal(SIGSTOP)) return false;
    if (!PollUntil([&] { return AllThreadsStopped(w.pid()); }, Millis(5000), Millis(2))) {
      return false;
    }
    if (postgres() || DatabaseWritable(check)) return true;
    std::cout << "[ harness  ] worker " << w.name << " was frozen inside a write transaction "
              << "(holding the database lock); letting it run and retrying\n";
    w.proc->Signal(SIGCONT);
    // Not a wait for a state: a back-off that lets it commit before the
    // next try.
    std::this_thread::sleep_for(Millis(20 + 10 * attempt));
  }
  return false;
}

std::string IntegrationTest::Job(const std::string& body) const {
  return "L='" + ledger_ +
         "'; log() { echo \"$WARDEN_JOB_ID $WARDEN_ATTEMPT $WARDEN_LEASE_TOKEN $*\" >> \"$L\"; "
         "}; " +
         body;
}

std::vector<LedgerLine> IntegrationTest::Ledger() const {
  std::vector<LedgerLine> out;
  for (const std::string& text : warden::testing::CompleteLines(ReadFile(ledger_))) {
    std::istringstream line(text);
    LedgerLine l;
    if (!(line >> l.job >> l.attempt >> l.token >> l.event)) continue;
    std::string arg;
    while (line >> arg) l.args.push_back(arg);
    out.push_back(std::move(l));
  }
  return out;
}

std::vector<LedgerLine> IntegrationTest::LedgerFor(int64_t job, const std::string& event) const {
  std::vector<LedgerLine> out;
  for (LedgerLine& l : Ledger()) {
    if (l.job == job && l.event == event) out.push_back(std::move(l));
  }
  return out;
}

bool IntegrationTest::LedgerHas(int64_t job, int attempt, const std::string& event) const {
  for (const LedgerLine& l : LedgerFor(job, event)) {
    if (l.attempt == attempt) return true;
  }
  return false;
}

ProcId IntegrationTest::ProcOf(const LedgerLine& l, size_t arg) {
  if (arg >= l.args.size()) return {};
  return Identify(static_cast<pid_t>(std::stol(l.args[arg])));
}

}  // namespace wt
