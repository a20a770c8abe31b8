// What an operator reads (issue 35 §6), with a real server and real CLI
// processes on both backends: tokens that expire (refused saying so, never
// showing the token) and keep their last use to the minute; `tokens` and
// `audit` under a header row; counts in good English; a worker given
// nothing to run told what a CLI user gives it.
#include <sqlite3.h>

#include "http_fixture.h"
#include "store/postgres/pg_conn.h"

namespace wt {
namespace {

class OperatorMessagesTest : public HttpApiTest {
 protected:
  // Runs `sql` on the test's database (tables named as on SQLite; on
  // PostgreSQL they are in schema warden).
  void ExecSql(const std::string& sql) {
    if (postgres()) {
      auto conn = warden::pg::Conn::Connect(db());
      ASSERT_TRUE(conn.has_value()) << conn.error().ToString();
      const warden::Status s = (*conn)->ExecScript("SET search_path = warden; " + sql);
      ASSERT_TRUE(s.ok()) << s.ToString();
      return;
    }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
    sqlite3_busy_timeout(raw, 5000);
    char* error = nullptr;
    const int rc = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &error);
    const std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(raw);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }

  Json TokenRow(const std::string& name) {
    CliResult r = Cli({"tokens"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const Json& t : r.json) {
      if (t.value("name", "") == name) return t;
    }
    return Json::object();
  }
};

TEST_P(OperatorMessagesTest, AnExpiredTokenIsRefusedSayingSoAndLastUseIsKeptToTheMinute) {
  CliResult made = Cli({"tokens", "create", "ci", "--expires-in", "90d"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string ci = made.json.value("token", "");
  ASSERT_FALSE(made.json["expires_at"].is_null()) << made.out;
  EXPECT_TRUE(made.json["last_used_at"].is_null()) << made.out;
  const std::string forever = Token("forever", "read");
  EXPECT_TRUE(TokenRow("forever")["expires_at"].is_null());
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {"soon", "--expires-in: invalid duration 'soon'"},
           {"30s", "a token's expiry must be at least 1m away, not 30s"},
           {"0s", "at least 1m away"}}) {
    CliResult r = Cli({"tokens", "create", "short", "--expires-in", bad}, /*json=*/false);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
  EXPECT_TRUE(TokenRow("short").empty()) << "no token was made";

  StartServer();
  const std::string admin = Token("admin", "admin");
  ASSERT_EQ(Http("GET", "/v1/queues", ci).status, 200);
  const Json used = TokenRow("ci");
  ASSERT_TRUE(used["last_used_at"].is_string()) << used.dump();
  // Within the minute, more requests write nothing more.
  ASSERT_EQ(Http("GET", "/v1/queues", ci).status, 200);
  ASSERT_EQ(Http("GET", "/v1/queues", ci).status, 200);
  EXPECT_EQ(TokenRow("ci")["last_used_at"], used["last_used_at"]);
  // Past it, the next request writes it again.
  ExecSql("UPDATE api_tokens SET last_used_at = last_used_at - 61000 WHERE name = 'ci'");
  const Json aged = TokenRow("ci")["last_used_at"];
  ASSERT_EQ(Http("GET", "/v1/queues", ci).status, 200);
  EXPECT_NE(TokenRow("ci")["last_used_at"], aged);
  EXPECT_TRUE(TokenRow("forever")["last_used_at"].is_null()) << "never presented";

  // Over HTTP too; a bad expires_in is refused, naming it.
  HttpResult posted = Http("POST", "/v1/tokens", admin, R"({"name":"bot","expires_in":"12h"})");
  ASSERT_EQ(posted.status, 201) << posted.body;
  EXPECT_TRUE(posted.json["expires_at"].is_string()) << posted.body;
  HttpResult bad = Http("POST", "/v1/tokens", admin, R"({"name":"bot2","expires_in":"later"})");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(bad.json["error"].value("message", "").find("expires_in"), std::string::npos)
      << bad.body;
  EXPECT_EQ(Http("POST", "/v1/tokens", admin, R"({"name":"bot3","expires_in":5})").status, 400);

  // Expired: refused, saying so and when, never showing the token.
  ExecSql("UPDATE api_tokens SET expires_at = created_at WHERE name = 'ci'");
  HttpResult expired = Http("GET", "/v1/queues", ci);
  EXPECT_EQ(expired.status, 401) << expired.body;
  const std::string message = expired.json["error"].value("message", "");
  EXPECT_EQ(message.rfind("the token ci expired at ", 0), 0u) << message;
  EXPECT_NE(message.find("warden tokens create"), std::string::npos) << message;
  EXPECT_EQ(expired.body.find(ci.substr(ci.rfind('_') + 1)), std::string::npos);
  EXPECT_NE(expired.headers.find("error_description=\"the token expired\""), std::string::npos)
      << expired.headers;
  EXPECT_EQ(server().Stderr().find(ci.substr(ci.rfind('_') + 1)), std::string::npos)
      << "the refusal's log line has no secret";
  // A wrong secret for the same id learns nothing of it.
  std::string wrong = ci;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  HttpResult guessed = Http("GET", "/v1/queues", wrong);
  EXPECT_EQ(guessed.status, 401);
  EXPECT_EQ(guessed.json["error"].value("message", ""), "the token is not a live token");
  EXPECT_EQ(Http("GET", "/v1/queues", forever).status, 200);

  CliResult listed = Cli({"tokens"}, /*json=*/false);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const std::string header = listed.out.substr(0, listed.out.find('\n'));
  for (const char* column : {"ID", "NAME", "SCOPE", "CREATED", "LAST USED", "EXPIRES", "STATE"}) {
    EXPECT_NE(header.find(column), std::string::npos) << header;
  }
  const size_t ci_row = listed.out.find("  ci ");
  ASSERT_NE(ci_row, std::string::npos) << listed.out;
  const std::string row = listed.out.substr(ci_row, listed.out.find('\n', ci_row) - ci_row);
  EXPECT_NE(row.find("expired"), std::string::npos) << row;
  EXPECT_EQ(row.find("never"), std::string::npos) << "used, and with an expiry: " << row;
  const size_t forever_row = listed.out.find("  forever ");
  ASSERT_NE(forever_row, std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("never", forever_row), std::string::npos) << listed.out;
}

TEST_P(OperatorMessagesTest, AuditListsUnderAHeaderRowAndCountsReadAsEnglish) {
  const int64_t id = Add("true", {"--queue", "mail"});
  ASSERT_GT(id, 0);
  CliResult cancelled = Cli({"jobs", "cancel", "--queue", "mail"}, /*json=*/false);
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
  EXPECT_NE(cancelled.out.find("1 of 1 job cancelled"), std::string::npos) << cancelled.out;
  EXPECT_NE(cancelled.out.find(", 1 batch,"), std::string::npos) << cancelled.out;

  CliResult audit = Cli({"audit"}, /*json=*/false);
  ASSERT_EQ(audit.exit_code, 0) << audit.err;
  const std::string header = audit.out.substr(0, audit.out.find('\n'));
  for (const char* column : {"ID", "AT", "ACTOR", "ACTION", "CHANGED", "TARGET"}) {
    EXPECT_NE(header.find(column), std::string::npos) << header;
  }
  EXPECT_NE(audit.out.find("jobs.bulk_cancel"), std::string::npos) << audit.out;
  EXPECT_EQ(Cli({"audit", "--before", "1"}, false).out, "no operator actions recorded\n");

  // A worker with nothing to run: what to give it, in the CLI's words.
  CliResult idle = Cli({"worker", "--name", "w"}, /*json=*/false);
  EXPECT_EQ(idle.exit_code, 2) << idle.err;
  EXPECT_NE(idle.err.find("this worker can run nothing: give --task NAME=COMMAND"),
            std::string::npos)
      << idle.err;
  EXPECT_EQ(idle.err.find("handler"), std::string::npos) << idle.err;
}

// A new panel has a line from the start: the histograms of every queue and
// cause at 0 before their first event, and the jobs no live worker can run
// counted by queue (WardenJobsUnserved).
TEST_P(OperatorMessagesTest, MetricsStartAtZeroAndCountUnservedJobs) {
  const std::string reader = Token("reader", "read");
  ASSERT_GT(Add("resize", {"--queue", "mail"}), 0);
  ASSERT_GT(Add("resize", {"--queue", "mail"}), 0);
  StartServer();
  HttpResult m = Http("GET", "/metrics", reader);
  ASSERT_EQ(m.status, 200) << m.body;
  for (const std::string& series : std::vector<std::string>{
           "warden_job_wait_seconds_bucket{queue=\"mail\",le=\"0.001\"} 0\n",
           "warden_job_wait_seconds_bucket{queue=\"mail\",le=\"+Inf\"} 0\n",
           "warden_job_wait_seconds_sum{queue=\"mail\"} 0\n",
           "warden_job_run_seconds_count{queue=\"mail\"} 0\n",
           "warden_recovery_seconds_count{cause=\"proven_death\"} 0\n",
           "warden_recovery_seconds_bucket{cause=\"operator\",le=\"300\"} 0\n",
           "warden_jobs_completed_total{queue=\"mail\",outcome=\"dead\"} 0\n",
           "warden_queue_unserved_jobs{queue=\"mail\"} 2\n",
       }) {
    EXPECT_TRUE(Has(m.body, series)) << series << " in\n" << m.body;
  }
  EXPECT_TRUE(Has(m.body, "# TYPE warden_queue_unserved_jobs gauge\n")) << m.body;
  const std::string file = dir() + "/metrics.txt";
  std::ofstream(file) << m.body;
  CliResult lint = RunToExit({"/bin/sh", "-c", "promtool check metrics < " + file},
                             dir() + "/promtool", Millis(30'000));
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
}

INSTANTIATE_TEST_SUITE_P(Backends, OperatorMessagesTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
