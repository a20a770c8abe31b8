// Issue 19 (3): a database password is never shown, whatever shows the URL
// (init, listings, --json, errors, a worker's log). PostgreSQL only: only
// its URLs carry passwords. The test server trusts every local connection,
// so it accepts the role's password and ignores it; that is enough to see
// where warden would print it.
#include <unistd.h>

#include "harness.h"
#include "store/postgres/pg_conn.h"

namespace wt {
namespace {

// Raw, and as written in a URL: '%' and '@' must be percent-encoded.
constexpr const char* kPassword = "S3cr3t%pw@x";
constexpr const char* kEncoded = "S3cr3t%25pw%40x";

class DbPasswordTest : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    if (::testing::Test::IsSkipped() || HasFatalFailure()) return;
    role_ = "warden_pw_" + std::to_string(getpid());
    auto admin = Admin();
    ASSERT_TRUE(admin.has_value()) << admin.error().ToString();
    ASSERT_TRUE((*admin)->ExecScript("DROP ROLE IF EXISTS " + role_).ok());
    // A role name and password are identifiers and literals in DDL, which
    // takes no parameters; both are this test's own constants.
    const warden::Status s = (*admin)->ExecScript(
        "CREATE ROLE " + role_ + " LOGIN SUPERUSER PASSWORD '" + kPassword + "'");
    ASSERT_TRUE(s.ok()) << s.ToString();
    // The schema is created by the server's own user, so the role owns
    // nothing and can be dropped at the end.
    ASSERT_EQ(Cli({"init"}).exit_code, 0);
  }
  void TearDown() override {
    IntegrationTest::TearDown();  // drops the database, so the role owns nothing
    if (role_.empty()) return;
    if (auto admin = Admin(); admin.has_value()) {
      (void)(*admin)->ExecScript("DROP ROLE IF EXISTS " + role_);
    }
  }
  // The test server's own database (roles are the cluster's).
  static warden::Result<std::unique_ptr<warden::pg::Conn>> Admin() {
    return warden::pg::Conn::Connect(warden::testing::PgTestUrl().value_or(""));
  }

  // db() as the role, with `userinfo_password` after "ROLE:" (if any) and
  // `query` appended to the query string (if any).
  std::string Url(const std::string& userinfo_password, const std::string& query = "") const {
    const std::string& base = db();
    const size_t start = base.find("://") + 3;
    const size_t slash = base.find('/', start);
    const size_t at = base.rfind('@', slash);
    const size_t host = at == std::string::npos || at < start ? start : at + 1;
    std::string url = base.substr(0, start) + role_ +
                      (userinfo_password.empty() ? "" : ":" + userinfo_password) + "@" +
                      base.substr(host);
    if (!query.empty()) url += (url.find('?') == std::string::npos ? "?" : "&") + query;
    return url;
  }

  CliResult Run(const std::string& url, std::vector<std::string> args) {
    args.insert(args.begin(), {WARDEN_BIN, "--db", url});
    return RunToExit(args, dir() + "/pw-" + std::to_string(++seq_), Millis(60'000));
  }

  // The password appears in none of `texts`, neither as written nor decoded
  // (nor the pieces a URL parser could split it into).
  static ::testing::AssertionResult Hidden(const std::string& text) {
    for (const std::string& secret : {std::string(kPassword), std::string(kEncoded),
                                      std::string("S3cr3t"), std::string("S3=cr3t")}) {
      if (text.find(secret) != std::string::npos) {
        return ::testing::AssertionFailure() << "'" << secret << "' shown in: " << text;
      }
    }
    return ::testing::AssertionSuccess();
  }

  std::string role_;
  int seq_ = 0;
};

TEST_P(DbPasswordTest, NoCommandShowsThePassword) {
  bool json_log = false;  // the second worker logs JSON (--log-format json)
  for (const std::string& url :
       {Url(kEncoded), Url("", std::string("password=") + kEncoded)}) {
    SCOPED_TRACE(url);
    CliResult r = Run(url, {"init"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("database postgresql://" + role_, 0), 0u) << r.out;
    EXPECT_NE(r.out.find("***"), std::string::npos) << r.out;
    EXPECT_TRUE(Hidden(r.out + r.err));
    r = Run(url, {"--json", "init"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(r.json.is_object()) << r.out;
    EXPECT_NE(r.json["db"].get<std::string>().find("***"), std::string::npos) << r.out;
    EXPECT_TRUE(Hidden(r.out + r.err));

    const std::string tag = std::to_string(++seq_);
    r = Run(url, {"add", "--cmd", "echo ok-" + tag});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(Hidden(r.out + r.err));
    // A worker on that URL: its log, and what it lists.
    Worker& w = StartWorkerProcess(
        "pw-" + tag, [&] {
          std::vector<std::string> argv = {WARDEN_BIN, "--db", url, "worker", "--allow-cmd",
                                           "--name", "pw-" + tag};
          for (const auto& f : FastFlags()) argv.push_back(f);
          if (json_log) argv.insert(argv.end(), {"--log-format", "json"});
          return argv;
        }());
    r = Run(url, {"wait", "--timeout", "30s"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"workers"},
                                               {"--json", "workers"},
                                               {"stats"},
                                               {"--json", "stats"},
                                               {"jobs"},
                                               {"--json", "jobs"},
                                               {"sweep"},
                                               {"jobs", "show", "999999"},  // an error
                                               {"workers", "release", "nobody"}}) {
      r = Run(url, args);
      EXPECT_TRUE(Hidden(r.out + r.err)) << args.back();
    }
    w.proc->Signal(SIGTERM);
    EXPECT_TRUE(w.proc->WaitExit(Millis(20'000)));
    EXPECT_TRUE(Hidden(w.Log()));
    if (json_log) {
      EXPECT_EQ(w.Log().rfind("{\"time\":", 0), 0u) << w.Log();
    }
    json_log = true;
  }
}

TEST_P(DbPasswordTest, ErrorsAboutTheUrlDoNotQuoteThePassword) {
  // Each is refused: libpq quotes the token it cannot read, the whole
  // password among them; a server that does not answer; a keyword/value
  // string (taken for a file path, which does not exist).
  const std::string port_one = [&] {
    std::string u = Url(kEncoded);
    const size_t colon = u.find(':', u.find('@'));
    const size_t slash = u.find('/', colon);
    return u.substr(0, colon) + ":1" + u.substr(slash);
  }();
  for (const std::string& url :
       {Url("S3cr3t%zzpw"), Url("", "password=S3=cr3t"), Url("", "password=S3cr3t&nosuch=1"),
        port_one, std::string("host=127.0.0.1 password=") + kPassword + " dbname=x"}) {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"stats"},
             {"--json", "init"},
             {"worker", "--allow-cmd", "--start-timeout", "1s"},
             {"worker", "--allow-cmd", "--start-timeout", "1s", "--log-format", "json"}}) {
      // (The worker retries port 1 for a second: its retry line is checked too.)
      if (url.rfind("host=", 0) == 0 && args[0] != "stats") continue;  // would create it
      CliResult r = Run(url, args);
      EXPECT_NE(r.exit_code, 0) << url << " " << args[0] << " " << args.back();
      if (args.back() == "json") {
        EXPECT_EQ(r.err.rfind("{\"time\":", 0), 0u) << r.err;
      }
      EXPECT_FALSE(r.err.empty()) << url;
      EXPECT_TRUE(Hidden(r.out + r.err)) << args[0] << " " << args.back();
    }
  }
}

// A URL given in the wrong place is quoted by the usage error: redacted.
TEST_P(DbPasswordTest, UsageErrorsQuotingAUrlDoNotShowThePassword) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"stats", Url(kEncoded)}, {Url(kEncoded)}, {"--json", "stats", Url(kEncoded)}}) {
    CliResult r = Run(db(), args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("***"), std::string::npos) << "the URL is quoted, redacted: " << r.err;
    EXPECT_TRUE(Hidden(r.out + r.err));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, DbPasswordTest, ::testing::Values(Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace wt
