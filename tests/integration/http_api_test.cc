// `warden serve` as a client meets it: a real server process on both
// backends, driven by curl (an HTTP implementation that is not the
// server's) and, for what no well-behaved client sends, raw sockets.
// Tokens and scopes, pause and resume with a real worker, jobs, errors and
// limits, cross-site refusal, TLS, /metrics checked by promtool, and the
// probes through a drain.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <set>
#include <thread>

#include "http_fixture.h"

namespace wt {
namespace {

TEST_P(HttpApiTest, EveryRouteButTheProbesNeedsATokenOfTheRightScope) {
  const std::string reader = Token("reader", "read");
  const std::string ops = Token("ops", "operate");
  const std::string admin = Token("admin", "admin");
  StartServer();

  EXPECT_EQ(Http("GET", "/healthz").status, 200);
  EXPECT_EQ(Http("GET", "/readyz").status, 200);
  HttpResult none = Http("GET", "/v1/queues");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.json["error"].value("code", ""), "unauthorized") << none.body;
  EXPECT_TRUE(Has(none.headers, "WWW-Authenticate: Bearer")) << none.headers;
  std::string forged = reader;
  forged.back() = forged.back() == 'a' ? 'b' : 'a';
  EXPECT_EQ(Http("GET", "/v1/queues", forged).status, 401);
  EXPECT_EQ(Http("GET", "/v1/queues", "wdn_1_short").status, 401);

  EXPECT_EQ(Http("GET", "/v1/queues", reader).status, 200);
  // The scheme's name is case-insensitive (RFC 9110 §11.1).
  EXPECT_EQ(Http("GET", "/v1/queues", "", "", {"-H", "Authorization: bEARER " + reader}).status,
            200);
  HttpResult denied = Http("POST", "/v1/queues/default/pause", reader);
  EXPECT_EQ(denied.status, 403);
  EXPECT_TRUE(Has(denied.json["error"].value("message", ""), "scope operate")) << denied.body;
  EXPECT_EQ(Http("POST", "/v1/queues/default/pause", ops, R"({"create":true})").status, 200);
  EXPECT_EQ(Http("GET", "/v1/tokens", ops).status, 403);

  // A token body is read by the strict parser of every route: a wrong
  // type is refused (a numeric scope once made a read token), and so are
  // unknown members, trailing bytes and a body nested past the limit (an
  // 8 MiB '[' once took 20 s and 2.3 GB to refuse).
  for (const std::string& body :
       {std::string(R"({"name":"t5","scope":5})"), std::string(R"({"name":"t6","scpe":"admin"})"),
        std::string(R"({"name":"t7"} {"name":"t8"})"), std::string(100'000, '['),
        std::string(R"(["t9"])")}) {
    const SteadyTime sent = std::chrono::steady_clock::now();
    HttpResult bad = Http("POST", "/v1/tokens", admin, body);
    EXPECT_EQ(bad.status, 400) << body.substr(0, 40) << ": " << bad.body;
    EXPECT_LT(MillisSince(sent), 10'000) << body.substr(0, 40);
  }
  EXPECT_FALSE(Has(Http("GET", "/v1/tokens", admin).body, "\"t5\"")) << "no token was made";

  // Tokens over the API: shown once, never listed with a secret, revocable.
  HttpResult made = Http("POST", "/v1/tokens", admin, R"({"name":"ci","scope":"enqueue"})");
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string ci = made.json.value("token", "");
  EXPECT_EQ(Http("GET", "/v1/jobs", ci).status, 200) << "enqueue includes read";
  HttpResult listed = Http("GET", "/v1/tokens", admin);
  EXPECT_FALSE(Has(listed.body, ci.substr(ci.rfind('_') + 1))) << listed.body;
  EXPECT_EQ(Http("DELETE", "/v1/tokens/ci", admin).status, 200);
  EXPECT_EQ(Http("GET", "/v1/jobs", ci).status, 401) << "revoked at once";

  // Who did what: the token's name, in the audit log.
  HttpResult audit = Http("GET", "/v1/audit", reader);
  ASSERT_EQ(audit.status, 200);
  const Json& entries = audit.json["entries"];
  ASSERT_GE(entries.size(), 3u) << audit.body;
  EXPECT_EQ(entries[0].value("action", ""), "token.revoke");
  EXPECT_EQ(entries[0].value("actor", ""), "token:admin");
  EXPECT_EQ(entries[2].value("action", ""), "queue.pause");
  EXPECT_EQ(entries[2].value("actor", ""), "token:ops");
  // No secret in the server's log.
  EXPECT_FALSE(Has(server().Stderr(), reader.substr(4))) << server().Stderr();
}

TEST_P(HttpApiTest, APauseOverHttpHoldsTheQueueUntilResumed) {
  const std::string ops = Token("ops", "operate");
  StartServer();
  StartWorker("w");
  ASSERT_EQ(Http("POST", "/v1/queues/default/pause", ops).status, 200);
  const int64_t held = Add(Job("log start"));
  EXPECT_TRUE(StaysTrueFor([&] { return JobInState(held, warden::JobState::kAvailable); },
                           Millis(1500)));
  HttpResult queues = Http("GET", "/v1/queues", ops);
  ASSERT_EQ(queues.status, 200);
  ASSERT_EQ(queues.json["queues"].size(), 1u) << queues.body;
  const Json& q = queues.json["queues"][0];
  EXPECT_TRUE(q.value("paused", false));
  EXPECT_EQ(q["jobs"].value("available", -1), 1);
  EXPECT_EQ(q.value("live_workers", -1), 1);
  HttpResult resumed = Http("POST", "/v1/queues/default/resume", ops);
  ASSERT_EQ(resumed.status, 200);
  EXPECT_TRUE(resumed.json.value("changed", false));
  EXPECT_TRUE(WaitFor([&] { return JobInState(held, warden::JobState::kSucceeded); }));
}

TEST_P(HttpApiTest, JobsAreEnqueuedOneOrABatchInOneTransaction) {
  const std::string producer = Token("producer", "enqueue");
  const std::string reader = Token("reader", "read");
  StartServer();
  HttpResult one = Http("POST", "/v1/jobs", producer,
                        R"({"task":"email","payload":{"to":"a@example.com"},"queue":"mail",)"
                        R"("unique_key":"welcome-1"})");
  ASSERT_EQ(one.status, 201) << one.body;
  const int64_t id = one.json.value("id", int64_t{0});
  EXPECT_TRUE(one.json.value("created", false));
  auto job = GetJob(id);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->queue, "mail");
  EXPECT_EQ(job->payload["to"], "a@example.com");
  HttpResult dup =
      Http("POST", "/v1/jobs", producer, R"({"task":"email","unique_key":"welcome-1"})");
  ASSERT_EQ(dup.status, 200) << "not created: " << dup.body;
  EXPECT_EQ(dup.json.value("id", int64_t{0}), id);
  EXPECT_FALSE(dup.json.value("created", true));

  HttpResult batch = Http("POST", "/v1/jobs/batch", producer,
                          R"({"jobs":[{"task":"a"},{"task":"b","delay":"1h"},{"task":"c"}]})");
  ASSERT_EQ(batch.status, 201) << batch.body;
  ASSERT_EQ(batch.json["jobs"].size(), 3u);
  // One bad job refuses the whole batch, naming it.
  const int64_t before = client().CountUnfinished().value();
  HttpResult bad = Http("POST", "/v1/jobs/batch", producer,
                        R"({"jobs":[{"task":"ok"},{"task":"x","priorty":1}]})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_TRUE(Has(bad.json["error"].value("message", ""), "jobs[1]")) << bad.body;
  EXPECT_TRUE(Has(bad.json["error"].value("message", ""), "priority")) << bad.body;
  EXPECT_EQ(client().CountUnfinished().value(), before) << "nothing of it stored";

  // Command jobs need the server's consent; reading is not enqueueing.
  HttpResult cmd = Http("POST", "/v1/jobs", producer, R"({"cmd":"rm -rf /"})");
  EXPECT_EQ(cmd.status, 403);
  EXPECT_EQ(cmd.json["error"].value("code", ""), "commands_not_allowed") << cmd.body;
  EXPECT_EQ(Http("POST", "/v1/jobs", reader, R"({"task":"t"})").status, 403);
  HttpResult junk = Http("POST", "/v1/jobs", producer, R"({"task":)");
  EXPECT_EQ(junk.status, 400);
  EXPECT_EQ(junk.json["error"].value("code", ""), "invalid_json") << junk.body;
  EXPECT_EQ(client().CountUnfinished().value(), before);
}

TEST_P(HttpApiTest, CommandJobsOverHttpRunWhenTheServerAllowsThem) {
  const std::string producer = Token("producer", "enqueue");
  StartServer({"--allow-cmd-jobs"});
  StartWorker("w");
  HttpResult r = Http("POST", "/v1/jobs", producer,
                      Json{{"cmd", Job("log start")}}.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const int64_t id = r.json.value("id", int64_t{0});
  EXPECT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kSucceeded); }));
  EXPECT_TRUE(LedgerHas(id, 1, "start"));
}

// Each cancel writes its audit entry in the cancel's own transaction: a
// server SIGKILLed in the middle of a stream of cancels leaves exactly the
// cancelled jobs in the log, and the one started after it goes on.
TEST_P(HttpApiTest, AServerKilledMidStreamLosesNoAuditEntry) {
  ASSERT_GT(StartServer({"--no-auth"}), 0);
  constexpr int kJobs = 400;
  Json batch = {{"jobs", Json::array()}};
  for (int i = 0; i < kJobs; ++i) batch["jobs"].push_back({{"task", "t"}, {"delay", "1h"}});
  HttpResult added = Http("POST", "/v1/jobs/batch", "", batch.dump());
  ASSERT_EQ(added.status, 201) << added.body;
  std::vector<int64_t> ids;
  for (const Json& j : added.json["jobs"]) ids.push_back(j["id"].get<int64_t>());
  ASSERT_EQ(ids.size(), size_t(kJobs));

  // One curl, one kept-alive connection, one cancel after another.
  const std::string config = dir() + "/cancels.curl";
  {
    std::ofstream out(config);
    for (int64_t id : ids) {
      out << "url = \"http://127.0.0.1:" << port_ << "/v1/jobs/" << id << "/cancel\"\n"
          << "request = \"POST\"\noutput = \"/dev/null\"\n";
    }
  }
  auto stream = warden::testing::Child::Spawn(
      {"/usr/bin/curl", "-sS", "-K", config, "-w", "%{http_code}\n"}, dir() + "/cancels.out",
      dir() + "/cancels.err");
  auto cancelled = [&] {
    CliResult r = Cli({"jobs", "--state", "cancelled", "--limit", "1000"});
    std::set<std::string> out;
    for (const Json& row : r.json) out.insert(std::to_string(row["id"].get<int64_t>()));
    return out;
  };
  ASSERT_TRUE(WaitFor([&] { return cancelled().size() >= 40; }));
  server().Kill();
  EXPECT_TRUE(stream->WaitExit(Millis(30'000)));
  const size_t at_kill = cancelled().size();
  std::cout << "[ measure  ] serve SIGKILLed after " << at_kill << " of " << kJobs
            << " cancels\n";

  ASSERT_GT(StartServer({"--no-auth"}), 0);
  EXPECT_EQ(Http("POST", "/v1/jobs/" + std::to_string(ids.back()) + "/cancel").status == 200,
            at_kill < size_t(kJobs))
      << "the restarted server goes on where the killed one stopped";
  CliResult audit = Cli({"audit", "--limit", "1000"});
  ASSERT_EQ(audit.exit_code, 0) << audit.err;
  std::multiset<std::string> logged;
  for (const Json& e : audit.json) {
    if (e["action"] == "job.cancel") logged.insert(e["target"].get<std::string>());
  }
  const std::set<std::string> done = cancelled();
  EXPECT_EQ(std::set<std::string>(logged.begin(), logged.end()), done)
      << "every cancel done is in the log, and only those";
  EXPECT_EQ(logged.size(), done.size()) << "each once";
}

TEST_P(HttpApiTest, JobsAreListedShownRetriedAndCancelled) {
  const std::string ops = Token("ops", "operate");
  StartServer();
  const int64_t dead = Add("exit 3", {"--max-attempts", "1"});
  const int64_t later = Add("true", {"--delay", "1h"});
  StartWorker("w");
  ASSERT_TRUE(WaitFor([&] { return JobInState(dead, warden::JobState::kDead); }));

  HttpResult list = Http("GET", "/v1/jobs?state=dead", ops);
  ASSERT_EQ(list.status, 200) << list.body;
  ASSERT_EQ(list.json["jobs"].size(), 1u) << list.body;
  EXPECT_EQ(list.json["jobs"][0].value("id", 0), dead);
  EXPECT_EQ(list.json.value("total", -1), 1);
  HttpResult both = Http("GET", "/v1/jobs?state=dead,scheduled&limit=1", ops);
  EXPECT_EQ(both.json["jobs"].size(), 1u);
  EXPECT_EQ(both.json.value("total", -1), 2);

  HttpResult shown = Http("GET", "/v1/jobs/" + std::to_string(dead), ops);
  ASSERT_EQ(shown.status, 200);
  ASSERT_EQ(shown.json["attempts"].size(), 1u) << shown.body;
  EXPECT_EQ(shown.json["attempts"][0]["error"].value("exit_code", 0), 3);

  ASSERT_EQ(Http("POST", "/v1/jobs/" + std::to_string(dead) + "/retry", ops).status, 200);
  EXPECT_TRUE(WaitFor([&] { return GetJob(dead) && GetJob(dead)->attempt == 2; }));
  HttpResult cancelled = Http("POST", "/v1/jobs/" + std::to_string(later) + "/cancel", ops);
  ASSERT_EQ(cancelled.status, 200) << cancelled.body;
  EXPECT_EQ(cancelled.json.value("state", ""), "cancelled");
  HttpResult again = Http("POST", "/v1/jobs/" + std::to_string(later) + "/cancel", ops);
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_EQ(again.json["error"].value("code", ""), "failed_precondition");
  EXPECT_EQ(Http("GET", "/v1/jobs/999999", ops).status, 404);

  HttpResult why = Http("GET", "/v1/jobs/" + std::to_string(later) + "/why", ops);
  ASSERT_EQ(why.status, 200) << why.body;
  EXPECT_EQ(why.json.value("state", ""), "cancelled");
  ASSERT_EQ(why.json["reasons"].size(), 1u) << why.body;
  EXPECT_EQ(why.json["reasons"][0].value("code", ""), "finished");
}

TEST_P(HttpApiTest, BadRequestsGetAJsonErrorAndTheServerGoesOn) {
  const std::string ops = Token("ops", "operate");
  StartServer({"--io-timeout", "1s"});
  struct Case {
    std::string method, path;
    int status;
    std::string code;
  };
  for (const Case& c : std::vector<Case>{
           {"GET", "/v1/nope", 404, "not_found"},
           {"GET", "/v1/jobs/abc", 400, "invalid_argument"},
           {"GET", "/v1/jobs?bogus=1", 400, "invalid_argument"},
           {"GET", "/v1/jobs?limit=0", 400, "invalid_argument"},
           {"GET", "/v1/jobs?state=lost", 400, "invalid_argument"},
           {"GET", "/v1/jobs?queue=%zz", 400, "bad_request"},
           {"GET", "/v1/jobs?queue=%00", 400, "bad_request"},
           // The refusal quotes the name, quote and all: still valid JSON.
           {"GET", "/v1/jobs?q%22x=%zz", 400, "bad_request"},
           {"DELETE", "/v1/queues", 405, "method_not_allowed"},
       }) {
    HttpResult r = Http(c.method, c.path, ops);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path << ": " << r.body;
    EXPECT_EQ(r.json["error"].value("code", ""), c.code) << c.path << ": " << r.body;
  }
  EXPECT_TRUE(Has(Http("DELETE", "/v1/queues", ops).headers, "Allow: GET"));
  // The routes open to anyone say 405 to anyone, token or not.
  for (const std::string path : {"/healthz", "/readyz", "/openapi.json"}) {
    for (const std::string& token : {std::string(), ops}) {
      HttpResult r = Http("POST", path, token);
      EXPECT_EQ(r.status, 405) << path << ": " << r.body;
      EXPECT_EQ(r.json["error"].value("code", ""), "method_not_allowed") << path;
      EXPECT_TRUE(Has(r.headers, "Allow: GET")) << path;
    }
  }

  // Another site's page cannot act for a logged-in browser.
  HttpResult cross = Http("POST", "/v1/queues/default/pause", ops, "",
                          {"-H", "Origin: http://evil.example"});
  EXPECT_EQ(cross.status, 403);
  EXPECT_EQ(cross.json["error"].value("code", ""), "cross_site");
  // A form's type: what to send instead, 415 (a script of this site that
  // left the type out gets it too), before the token is looked at.
  HttpResult form = Http("POST", "/v1/tokens", ops, "",
                         {"-H", "Content-Type: text/plain", "--data-binary", "x"});
  EXPECT_EQ(form.status, 415) << form.body;
  EXPECT_EQ(form.json["error"].value("code", ""), "unsupported_media_type") << form.body;
  EXPECT_EQ(form.json["error"].value("message", ""),
            "send the request body as Content-Type: application/json (this request's was "
            "text/plain)");
  EXPECT_TRUE(Has(form.headers, "Accept: application/json")) << form.headers;
  EXPECT_EQ(Http("POST", "/v1/tokens", "", "", {"-H", "Content-Type: text/plain",
                                                "--data-binary", "x"}).status,
            415);

  // What curl would not send: a broken request line, headers past the
  // limit, a body past the limit, and a client too slow to finish.
  const std::string broken = Raw("NOT HTTP AT ALL\r\n\r\n");
  EXPECT_TRUE(Has(broken, "HTTP/1.1 400")) << broken;
  EXPECT_TRUE(Has(broken, "\"code\":\"bad_request\"")) << broken;
  const std::string huge_header =
      Raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(20'000, 'a') +
          "\r\n\r\n");
  EXPECT_TRUE(Has(huge_header, "HTTP/1.1 431")) << huge_header.substr(0, 200);
  const std::string huge_body = Raw(
      "POST /v1/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 9000000\r\n\r\n");
  EXPECT_TRUE(Has(huge_body, "HTTP/1.1 413")) << huge_body;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string slow = Raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");  // never finished
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(slow, "") << "a request that never ends gets no answer";
  EXPECT_LT(waited, std::chrono::seconds(10)) << "cut off after --io-timeout (1s)";
  EXPECT_EQ(Http("GET", "/healthz").status, 200) << "and the server goes on";
  EXPECT_FALSE(server().Exited()) << server().Stderr();
}

TEST_P(HttpApiTest, MetricsAreValidPrometheusTextWithEscapedLabels) {
  const std::string reader = Token("reader", "read");
  StartServer();
  Add("true", {"--queue", "quote\"back\\slash"});
  Add("true");
  HttpResult denied = Http("GET", "/metrics");
  EXPECT_EQ(denied.status, 401);
  HttpResult m = Http("GET", "/metrics", reader);
  ASSERT_EQ(m.status, 200);
  EXPECT_TRUE(Has(m.headers, "text/plain; version=0.0.4")) << m.headers;
  EXPECT_TRUE(Has(m.body, "warden_jobs{queue=\"default\",state=\"available\"} 1")) << m.body;
  EXPECT_TRUE(Has(m.body, "queue=\"quote\\\"back\\\\slash\"")) << m.body;
  EXPECT_TRUE(Has(m.body, "warden_workers{state=\"active\"} 0")) << m.body;
  // promtool, Prometheus's own linter, reads it as Prometheus would.
  const std::string file = dir() + "/metrics.txt";
  std::ofstream(file) << m.body;
  CliResult lint = RunToExit({"/bin/sh", "-c", "promtool check metrics < " + file},
                             dir() + "/promtool", Millis(30'000));
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
}

// The port a worker's endpoint says it serves `what` on ("/metrics",
// "/healthz"), from its log; -1 if it has not said.
int EndpointPort(const Worker& w, const std::string& what) {
  const std::string log = w.Log();
  const size_t at = log.find("serving " + what);
  if (at == std::string::npos) return -1;
  const size_t colon = log.find("127.0.0.1:", at);
  return colon == std::string::npos ? -1 : std::atoi(log.c_str() + colon + 10);
}

// What one series of a Prometheus text reads (-1: absent).
double Sample(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::strtod(text.c_str() + at + series.size() + 2, nullptr);
}

TEST_P(HttpApiTest, TheFleetsCountersComeFromEveryWorkerAndSurviveItsDeath) {
  // --no-maintenance: b, not this server, is to prove a's death and lead.
  StartServer({"--no-auth", "--no-maintenance"});
  auto metrics = [&] { return Http("GET", "/metrics").body; };
  auto lint = [&](const std::string& text, const std::string& name) {
    const std::string file = dir() + "/" + name + ".txt";
    std::ofstream(file) << text;
    CliResult r = RunToExit({"/bin/sh", "-c", "promtool check metrics < " + file},
                            dir() + "/promtool-" + name, Millis(30'000));
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.out << r.err;
  };
  // Before any worker: every counter whose labels are known is there, at 0.
  Add("true", {"--queue", "email"});
  const std::string before = metrics();
  EXPECT_EQ(Sample(before, R"(warden_jobs_completed_total{queue="email",outcome="dead"})"), 0)
      << before;
  EXPECT_EQ(Sample(before, R"(warden_jobs_rescued_total{cause="proven_death"})"), 0);
  EXPECT_EQ(Sample(before, "warden_fenced_writes_total"), 0);
  EXPECT_EQ(Sample(before, "warden_jobs_enqueued_total"), 1);

  std::vector<std::string> a_flags = FastFlags();
  a_flags.insert(a_flags.end(), {"--queues", "email,default", "--metrics-listen",
                                 "127.0.0.1:0", "--health-listen", "127.0.0.1:0"});
  Worker& a = StartWorker("a", a_flags, 4);
  Add("true", {"--queue", "email"});
  Add("exit 3", {"--queue", "email", "--max-attempts", "1"});
  const int64_t held = Add("sleep 60");
  ASSERT_TRUE(WaitFor([&] {
    const std::string m = metrics();
    return Sample(m, R"(warden_jobs_completed_total{queue="email",outcome="succeeded"})") == 2 &&
           Sample(m, R"(warden_jobs_completed_total{queue="email",outcome="dead"})") == 1;
  })) << metrics();
  ASSERT_TRUE(WaitFor([&] { return JobInState(held, warden::JobState::kRunning); }));

  // a's own endpoint: its share, under its own names, and its probes.
  const int a_metrics = EndpointPort(a, "/metrics");
  const int a_health = EndpointPort(a, "/healthz");
  ASSERT_GT(a_metrics, 0) << a.Log();
  ASSERT_GT(a_health, 0) << a.Log();
  const int server_port = port_;
  port_ = a_metrics;
  const std::string own = Http("GET", "/metrics").body;
  EXPECT_EQ(Sample(own, R"(warden_worker_jobs_completed_total{queue="email",outcome="succeeded"})"),
            2)
      << own;
  // What has not happened yet is there at 0, for each of its queues and
  // every cause: a panel of it has a line from the first scrape.
  EXPECT_EQ(Sample(own, R"(warden_worker_jobs_completed_total{queue="default",outcome="dead"})"), 0)
      << own;
  EXPECT_EQ(Sample(own, R"(warden_worker_crash_loop_quarantines_total{queue="email"})"), 0);
  EXPECT_EQ(Sample(own, R"(warden_worker_job_run_seconds_count{queue="default"})"), 0);
  EXPECT_EQ(Sample(own, R"(warden_worker_job_run_seconds_bucket{queue="default",le="+Inf"})"), 0);
  EXPECT_EQ(Sample(own, R"(warden_worker_job_run_seconds_count{queue="email"})"), 3);
  EXPECT_EQ(Sample(own, R"(warden_worker_jobs_rescued_total{cause="lease_expiry"})"), 0);
  EXPECT_EQ(Sample(own, R"(warden_worker_recovery_seconds_count{cause="proven_death"})"), 0);
  EXPECT_EQ(Sample(own, "warden_worker_slots"), 4);
  EXPECT_EQ(Sample(own, "warden_worker_running_jobs"), 1);
  EXPECT_GT(Sample(own, "process_resident_memory_bytes"), 0);
  EXPECT_EQ(own.find("\nwarden_jobs_completed_total"), std::string::npos)
      << "a worker's share must not carry the fleet's names";
  lint(own, "worker");
  EXPECT_EQ(Http("POST", "/metrics").status, 405);
  EXPECT_EQ(Http("GET", "/healthz").status, 404) << "not on the metrics address";
  port_ = a_health;
  EXPECT_EQ(Http("GET", "/healthz").status, 200);
  EXPECT_EQ(Http("GET", "/readyz").status, 200);
  port_ = server_port;

  // b proves a's death and rescues its job; a's counts stay in its row.
  Worker& b = StartWorker("b", {}, 2);
  a.proc->Kill();
  ASSERT_TRUE(WaitFor([&] {
    return Sample(metrics(), R"(warden_jobs_rescued_total{cause="proven_death"})") == 1;
  })) << metrics() << b.Log();
  ASSERT_TRUE(WaitFor([&] {
    return Sample(metrics(), R"(warden_maintenance_leader{worker="b"})") == 1;
  })) << metrics();
  const std::string after = metrics();
  EXPECT_EQ(Sample(after, R"(warden_jobs_completed_total{queue="email",outcome="succeeded"})"), 2);
  EXPECT_EQ(Sample(after, R"(warden_jobs_completed_total{queue="default",outcome="failed"})"), 1)
      << "the lost attempt";
  EXPECT_EQ(Sample(after, R"(warden_recovery_seconds_count{cause="proven_death"})"), 1);
  EXPECT_GE(Sample(after, R"(warden_recovery_seconds_bucket{cause="proven_death",le="+Inf"})"),
            1);
  EXPECT_EQ(Sample(after, R"(warden_job_wait_seconds_count{queue="email"})"), 3) << after;
  EXPECT_EQ(Sample(after, R"(warden_job_run_seconds_count{queue="email"})"), 3);
  EXPECT_EQ(Sample(after, "warden_jobs_enqueued_total"), 4);
  lint(after, "serve");

  // b's graceful stop hands the job back: a release, counted as b goes.
  ASSERT_TRUE(WaitFor([&] { return JobInState(held, warden::JobState::kRunning); }));
  ASSERT_TRUE(b.proc->Signal(SIGTERM));
  // The second (once the first is taken: signals do not queue) releases
  // the job at once.
  ASSERT_TRUE(WaitFor([&] { return b.LogHas("draining"); })) << b.Log();
  ASSERT_TRUE(b.proc->Signal(SIGTERM));
  ASSERT_TRUE(b.proc->WaitExit(Millis(30'000)));
  EXPECT_EQ(Sample(metrics(), R"(warden_jobs_rescued_total{cause="release"})"), 1) << b.Log();
}

TEST_P(HttpApiTest, AnOperatorsReleaseAndASweepAreCountedToo) {
  StartServer({"--no-auth"});
  StartWorker("c", {}, 1);
  const int64_t id = Add("sleep 60");
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kRunning); }));
  CliResult r = Cli({"workers", "release", "c", "--force"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string m = Http("GET", "/metrics").body;
  EXPECT_EQ(Sample(m, R"(warden_jobs_rescued_total{cause="operator"})"), 1) << m;
  EXPECT_EQ(Sample(m, R"(warden_recovery_seconds_count{cause="operator"})"), 1) << m;
  EXPECT_EQ(Sample(m, R"(warden_jobs_completed_total{queue="default",outcome="failed"})"), 1);
}

TEST_P(HttpApiTest, AWorkersReadyzSays503WhileItDrains) {
  std::vector<std::string> flags = FastFlags({{"--shutdown-timeout", "30s"}});
  flags.insert(flags.end(), {"--health-listen", "127.0.0.1:0"});
  Worker& w = StartWorker("w", flags, 1);
  const int64_t id = Add("sleep 60");
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kRunning); }));
  port_ = EndpointPort(w, "/healthz");
  ASSERT_GT(port_, 0) << w.Log();
  EXPECT_EQ(Http("GET", "/readyz").status, 200);
  ASSERT_TRUE(w.proc->Signal(SIGTERM));
  EXPECT_TRUE(WaitFor([&] { return Http("GET", "/readyz").status == 503; })) << w.Log();
  EXPECT_EQ(Http("GET", "/healthz").status, 200) << "alive while it drains";
  ASSERT_TRUE(w.proc->Signal(SIGTERM));
  ASSERT_TRUE(w.proc->WaitExit(Millis(30'000)));
}

TEST_P(HttpApiTest, ABadEndpointAddressFailsTheWorkerAtOnce) {
  CliResult r = Cli({"worker", "--allow-cmd", "--metrics-listen", "localhost"}, false);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(Has(r.err, "--metrics-listen 'localhost' is not ADDR:PORT")) << r.err;
}

// Reads from `fd` until a whole `event: change` block (after `*buffer`'s
// leftovers) or `wait`; true if one came. Pings and the headers are skipped.
bool ReadChangeEvent(int fd, std::string* buffer, Millis wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (true) {
    for (size_t end; (end = buffer->find("\n\n")) != std::string::npos;) {
      const std::string block = buffer->substr(0, end);
      buffer->erase(0, end + 2);
      if (block.find("event: change\ndata: {") != std::string::npos) return true;
    }
    const auto left =
        std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count()))) <= 0) return false;
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    buffer->append(buf, static_cast<size_t>(n));
  }
}

// GET /v1/events holds a socket, not a thread: with far more streams open
// than the server has handler threads (4), ordinary requests are answered,
// and each stream is told of a change. (The dashboard's use of it, a
// rescue seen live: tests/web.)
TEST_P(HttpApiTest, EventStreamsHoldNoThreadAndEachHearsOfAChange) {
  StartServer({"--no-auth"});
  constexpr int kStreams = 200;
  std::vector<int> fds = Flood(port_, kStreams);
  std::vector<std::string> buffers(kStreams);
  const std::string request = "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  for (int i = 0; i < kStreams; ++i) {
    ASSERT_EQ(send(fds[i], request.data(), request.size(), MSG_NOSIGNAL), ssize_t(request.size()));
  }
  for (int i = 0; i < kStreams; ++i) {
    ASSERT_TRUE(ReadChangeEvent(fds[i], &buffers[i], Millis(15'000))) << "stream " << i;
  }
  for (int i = 0; i < 20; ++i) {
    HttpResult r = Http("GET", "/v1/queues");
    ASSERT_EQ(r.status, 200) << r.body;
  }
  // Drop what the first looks sent, then one change for all.
  std::this_thread::sleep_for(Millis(1000));
  for (int i = 0; i < kStreams; ++i) {
    while (ReadChangeEvent(fds[i], &buffers[i], Millis(0))) {
    }
  }
  ASSERT_GT(Add("true"), 0);
  int heard = 0;
  for (int i = 0; i < kStreams; ++i) heard += ReadChangeEvent(fds[i], &buffers[i], Millis(10'000));
  EXPECT_EQ(heard, kStreams);
  // Clients that go away cost nothing more; the server goes on.
  for (int i = 0; i < kStreams / 2; ++i) close(fds[i]);
  EXPECT_EQ(Http("GET", "/v1/stats").status, 200);
  ASSERT_GT(Add("true"), 0);
  for (int i = kStreams / 2; i < kStreams; ++i) {
    EXPECT_TRUE(ReadChangeEvent(fds[i], &buffers[i], Millis(10'000))) << "stream " << i;
    close(fds[i]);
  }
  EXPECT_FALSE(server().Exited());
}

TEST_P(HttpApiTest, AConnectionFloodIsAnswered503AndTheServerGoesOn) {
  StartServer({"--no-auth", "--max-connections", "20"});
  // Each in the middle of a request (its body not all sent): busy, not idle
  // (idle ones make room: HttpHardeningTest).
  const std::string busy =
      "POST /v1/queues/q/pause HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
      "application/json\r\nContent-Length: 10\r\n\r\n{";
  std::vector<int> flood = Flood(port_, 20, busy);
  // The 21st and later: 503 at once, and closed; none waits for a slot.
  // A flood connection whose headers the server had not read yet was still
  // idle, and made room for a look (a slow machine, ThreadSanitizer): then
  // one more busy connection takes the slot it left, once the server has
  // had the time to read its headers (a look sooner would take it again).
  EXPECT_TRUE(WaitFor([&] {
    const std::string answer = Raw(
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", Millis(2000));
    if (Has(answer, "HTTP/1.1 503") && Has(answer, "too_many_connections")) return true;
    for (int fd : Flood(port_, 1, busy)) flood.push_back(fd);
    std::this_thread::sleep_for(Millis(300));
    return false;
  }));
  HttpResult refused = Http("GET", "/healthz");
  EXPECT_EQ(refused.status, 503);
  EXPECT_TRUE(Has(refused.headers, "Retry-After: 1")) << refused.headers;
  for (int fd : flood) close(fd);
  EXPECT_TRUE(WaitFor([&] { return Http("GET", "/healthz").status == 200; }));
  EXPECT_FALSE(server().Exited());
}

TEST_P(HttpApiTest, OutOfFileDescriptorsTheServerPausesAcceptsInsteadOfSpinning) {
#if defined(__SANITIZE_ADDRESS__)
  // In the ASan+UBSan tree the server, out of fds, stops on a UBSan vptr
  // report inside Boost.System 1.74's error_code::failed (error_code.hpp:417)
  // with "<memory cannot be printed>", and no ASan report. Most likely the
  // sanitizer runtime itself needs fds: it checks that a vtable is readable
  // through a pipe, which fails with EMFILE, so any virtual call looks
  // invalid. Open in issue 20 until confirmed. The Release and TSan trees
  // run this test.
  GTEST_SKIP() << "UBSan vptr report in Boost.System under fd exhaustion: under investigation";
#endif
  // 64 fds: a flood of 100 exhausts them. Accepting fails (EMFILE) until
  // some close; the server must neither spin nor log each failure.
  const std::string base = dir() + "/serve-lowfds";
  servers_.push_back(warden::testing::Child::Spawn(
      {"/usr/bin/prlimit", "--nofile=64:64", WARDEN_BIN, "--db", db(), "serve", "--listen",
       "127.0.0.1:0", "--no-auth"},
      base + ".out", base + ".err"));
  warden::testing::Child& s = *servers_.back();
  ASSERT_TRUE(WaitFor([&] {
    const std::string log = s.Stderr();
    const size_t at = log.find("serving on 127.0.0.1:");
    if (at != std::string::npos) port_ = std::atoi(log.c_str() + at + 21);
    return port_ > 0 || s.Exited();
  })) << s.Stderr();
  std::vector<int> flood = Flood(port_, 100);
  EXPECT_TRUE(WaitFor([&] { return Has(s.Stderr(), "accept failed"); })) << s.Stderr();
  // The stimulus, not a wait: accepts keep failing for 1.5 s, long enough
  // for a line a second to say so twice and a line per failure hundreds of
  // times.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  for (int fd : flood) close(fd);
  EXPECT_TRUE(WaitFor([&] { return Http("GET", "/healthz").status == 200; })) << s.Stderr();
  size_t lines = 0;
  for (size_t at = 0; (at = s.Stderr().find("accept failed", at)) != std::string::npos; ++at) {
    ++lines;
  }
  EXPECT_LE(lines, 4u) << "one line a second at most:\n" << s.Stderr();
  EXPECT_FALSE(s.Exited());
}

TEST_P(HttpApiTest, ReadyzAnswers503WhileDrainingThenTheServerExits) {
  StartServer({"--drain-grace", "3s"});
  EXPECT_EQ(Http("GET", "/readyz").status, 200);
  ASSERT_TRUE(server().Signal(SIGTERM));
  EXPECT_TRUE(WaitFor([&] { return Http("GET", "/readyz").status == 503; }));
  EXPECT_EQ(Http("GET", "/healthz").status, 200) << "still up while draining";
  ASSERT_TRUE(server().WaitExit(Millis(30'000)));
  EXPECT_EQ(server().ExitCode(), 0) << server().Stderr();
}

// DNS rebinding: a page whose own name was made to resolve to 127.0.0.1
// reaches the server as same-origin, its Origin and Host alike
// (server/host_check.h). A --no-auth server is what such a page would take
// over: it answers only IP addresses, localhost and the --allow-host names.
// (The same, from a real Chromium page: tests/web.)
TEST_P(HttpApiTest, OnlyItsOwnNamesAreAnsweredAgainstDnsRebinding) {
  for (const char* name : {"a:80", "a:", "[::1]"}) {
    CliResult bad = Cli({"serve", "--listen", "127.0.0.1:0", "--allow-host",
                         std::string("ok.example,") + name},
                        /*json=*/false);
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    EXPECT_TRUE(Has(bad.err, std::string("--allow-host '") + name + "' is not a host name"))
        << bad.err;
  }

  const std::string port = std::to_string(StartServer(
      {"--no-auth", "--allow-host", "warden.example,Ops.Example"}));
  const auto as = [&](const std::string& host, const std::string& method, const std::string& path,
                      const std::string& body = "") {
    return Http(method, path, "", body, {"-H", "Host: " + host});
  };
  for (const char* path : {"/v1/jobs", "/", "/metrics", "/healthz"}) {
    HttpResult r = as("rebind.test:" + port, "GET", path);
    EXPECT_EQ(r.status, 403) << path << ": " << r.body;
    EXPECT_EQ(r.json["error"].value("code", ""), "host_not_allowed") << path;
  }
  for (const std::string& host : std::vector<std::string>{
           "rebind.test", "127.0.0.1.nip.io:" + port, "localhost.evil",
           "warden.example.evil:" + port, "sub.warden.example"}) {
    EXPECT_EQ(as(host, "GET", "/v1/jobs").status, 403) << host;
  }
  HttpResult minted =
      as("rebind.test:" + port, "POST", "/v1/tokens", R"({"name":"rebound","scope":"admin"})");
  EXPECT_EQ(minted.status, 403) << minted.body;
  EXPECT_TRUE(Has(minted.json["error"].value("message", ""), "--allow-host")) << minted.body;
  EXPECT_FALSE(Has(Cli({"tokens"}, false).out, "rebound")) << "no token was minted";

  // Names no DNS answer can move, any port (ssh -L, a proxy), and the
  // operator's, in any case.
  for (const std::string& host : std::vector<std::string>{
           "127.0.0.1:" + port, "localhost:" + port, "LocalHost:8080", "[::1]:" + port,
           "10.1.2.3", "warden.example", "OPS.example:443"}) {
    EXPECT_EQ(as(host, "GET", "/v1/jobs").status, 200) << host;
  }
  // The API's description names the server asked, by the name it was asked by.
  for (const std::string& host : std::vector<std::string>{"127.0.0.1:" + port,
                                                           "warden.example:8443"}) {
    HttpResult doc = as(host, "GET", "/openapi.json");
    ASSERT_EQ(doc.status, 200) << host;
    EXPECT_EQ(doc.json["servers"], Json::array({{{"url", "http://" + host}}})) << host;
  }
  // What is not a Host at all.
  for (const char* host : {"bad host", "[::1", "[nope]:1", "x:99999", "x:1a", "a/b"}) {
    HttpResult r = as(host, "GET", "/v1/jobs");
    EXPECT_EQ(r.status, 400) << host << ": " << r.body;
    EXPECT_EQ(r.json["error"].value("code", ""), "bad_request") << host;
  }
  const std::string no_host = Raw("GET /v1/jobs HTTP/1.1\r\n\r\n", Millis(5000));
  EXPECT_TRUE(Has(no_host, "HTTP/1.1 400")) << no_host;
  EXPECT_TRUE(Has(no_host, "no Host header")) << no_host;

  // The Origin is compared whole, scheme too; the media type without
  // regard to case, parameters aside.
  HttpResult https_origin = Http("POST", "/v1/queues/default/pause", "", "",
                                 {"-H", "Origin: https://127.0.0.1:" + port});
  EXPECT_EQ(https_origin.status, 403) << https_origin.body;
  EXPECT_EQ(https_origin.json["error"].value("code", ""), "cross_site");
  EXPECT_EQ(Http("POST", "/v1/queues/default/pause", "", R"({"create":true})",
                 {"-H", "Origin: http://127.0.0.1:" + port})
                .status,
            200);
  HttpResult typed = Http("POST", "/v1/jobs", "", "",
                          {"-H", "Content-Type: Application/JSON; charset=UTF-8",
                           "--data-binary", R"({"task":"t"})"});
  EXPECT_EQ(typed.status, 201) << typed.body;
  HttpResult untyped = Http("POST", "/v1/jobs", "", "",
                            {"-H", "Content-Type:", "--data-binary", R"({"task":"t"})"});
  EXPECT_EQ(untyped.status, 415) << untyped.body;
  EXPECT_EQ(untyped.json["error"].value("message", ""),
            "send the request body as Content-Type: application/json (this request's had none)")
      << untyped.body;
}

TEST_P(HttpApiTest, NoAuthIsRefusedOffLoopbackAndTlsServesHttps) {
  CliResult open = Cli({"serve", "--no-auth", "--listen", "0.0.0.0:0"}, /*json=*/false);
  EXPECT_EQ(open.exit_code, 2) << open.err;
  EXPECT_TRUE(Has(open.err, "--no-auth is refused on 0.0.0.0")) << open.err;

  const std::string cert = dir() + "/cert.pem", key = dir() + "/key.pem";
  CliResult made = RunToExit({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                              "-keyout", key, "-out", cert, "-days", "1", "-subj",
                              "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"},
                             dir() + "/openssl", Millis(60'000));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string reader = Token("reader", "read");
  StartServer({"--tls-cert", cert, "--tls-key", key});
  HttpResult r = Http("GET", "/v1/queues", reader, "", {"--cacert", cert});
  EXPECT_EQ(r.status, 200) << r.body;
  HttpResult doc = Http("GET", "/openapi.json", "", "", {"--cacert", cert});
  EXPECT_EQ(doc.json["servers"][0].value("url", ""), "https://127.0.0.1:" + std::to_string(port_));
  // TLS 1.2: forward-secret AEAD suites only, in the server's order.
  const auto tls12 = [&](const std::string& ciphers, const std::string& name) {
    return RunToExit({"/usr/bin/openssl", "s_client", "-connect",
                      "127.0.0.1:" + std::to_string(port_), "-tls1_2", "-cipher", ciphers},
                     dir() + "/s_client-" + name, Millis(30'000));
  };
  CliResult rsa = tls12("AES128-SHA:AES256-GCM-SHA384", "rsa");
  EXPECT_NE(rsa.exit_code, 0) << "a suite without forward secrecy was agreed: " << rsa.out;
  CliResult cbc = tls12("ECDHE-RSA-AES128-SHA", "cbc");
  EXPECT_NE(cbc.exit_code, 0) << "a CBC suite was agreed: " << cbc.out;
  CliResult order = tls12("ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256", "order");
  EXPECT_EQ(order.exit_code, 0) << order.err;
  EXPECT_TRUE(Has(order.out, "Cipher is ECDHE-RSA-AES128-GCM-SHA256")) << "the server's order: "
                                                                       << order.out;
  // Plain HTTP to the TLS port gets no answer an HTTP client could take,
  // and a flood of failed handshakes a line a second in the log, not one
  // each.
  scheme_ = "http";
  const std::string plain =
      Raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", Millis(5000));
  EXPECT_FALSE(Has(plain, "HTTP/1.1 200")) << plain;
  const auto handshake_lines = [&] {
    const std::string log = server().Stderr();
    size_t n = 0;
    for (size_t at = log.find("TLS handshake with"); at != std::string::npos;
         at = log.find("TLS handshake with", at + 1)) {
      ++n;
    }
    return n;
  };
  const size_t before = handshake_lines();
  const SteadyTime flood = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) Raw("x\r\n\r\n", Millis(5000));
  const int64_t flood_ms = MillisSince(flood);
  EXPECT_LE(handshake_lines() - before, static_cast<size_t>(flood_ms / 1000 + 2))
      << server().Stderr();
}

// Filters and keyset pages over HTTP: every job once, newest first, while
// jobs change between pages; a bad cursor or parameter is a 400 naming it.
TEST_P(HttpApiTest, JobListingsFilterAndPageByCursor) {
  const std::string reader = Token("reader", "read");
  std::vector<warden::JobSpec> specs(7);
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i].task = "t";
    specs[i].payload = {{"order", "ORD-" + std::to_string(i)}};
  }
  specs[3].unique_key = "welcome-3";
  const std::vector<int64_t> ids = EnqueueMany(specs);
  StartServer();
  std::vector<int64_t> seen;
  std::string cursor;
  int pages = 0;
  while (true) {
    HttpResult page =
        Http("GET", "/v1/jobs?limit=3" + (cursor.empty() ? "" : "&cursor=" + cursor), reader);
    ASSERT_EQ(page.status, 200) << page.body;
    EXPECT_EQ(page.json.value("total", -1), pages == 0 ? 7 : 6) << page.body;
    for (const Json& j : page.json["jobs"]) seen.push_back(j.value("id", int64_t{0}));
    if (pages++ == 0) {
      // A job on a later page goes: not shown; the others are, once each.
      ASSERT_TRUE(client().CancelJob(ids[1]).has_value());
      ASSERT_TRUE(client().DeleteJob(ids[1]).ok());
    }
    if (page.json["next_cursor"].is_null()) break;
    cursor = page.json["next_cursor"].get<std::string>();
  }
  // Newest first by id (PostgreSQL stores a batch's unique-key job first).
  std::vector<int64_t> expected;
  for (int64_t id : ids) {
    if (id != ids[1]) expected.push_back(id);
  }
  std::sort(expected.rbegin(), expected.rend());
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(pages, 2);

  HttpResult found = Http("GET", "/v1/jobs?q=ORD-5&state=available", reader);
  ASSERT_EQ(found.status, 200) << found.body;
  ASSERT_EQ(found.json["jobs"].size(), 1u) << found.body;
  EXPECT_EQ(found.json["jobs"][0].value("id", int64_t{0}), ids[5]);
  HttpResult keyed = Http("GET", "/v1/jobs?unique_key=welcome-3", reader);
  ASSERT_EQ(keyed.json["jobs"].size(), 1u) << keyed.body;
  HttpResult later = Http("GET", "/v1/jobs?created_after=2999-01-01T00:00:00Z", reader);
  EXPECT_EQ(later.json.value("total", -1), 0) << later.body;

  for (const std::string bad : {"/v1/jobs?cursor=zz", "/v1/jobs?cursor=c",
                                "/v1/jobs?created_after=yesterday", "/v1/jobs?state=lost",
                                "/v1/jobs?colour=red"}) {
    HttpResult r = Http("GET", bad, reader);
    EXPECT_EQ(r.status, 400) << bad << ": " << r.body;
    EXPECT_EQ(r.json["error"].value("code", ""), "invalid_argument") << r.body;
  }
}

TEST_P(HttpApiTest, DeleteTakesFinishedJobsAndBulkRunsByFilter) {
  const std::string reader = Token("reader", "read");
  const std::string ops = Token("ops", "operate");
  std::vector<warden::JobSpec> specs(12);
  for (auto& s : specs) s.task = "t";
  specs[0].queue = "other";
  const std::vector<int64_t> ids = EnqueueMany(specs);
  StartServer();

  HttpResult waiting = Http("DELETE", "/v1/jobs/" + std::to_string(ids[1]), ops);
  EXPECT_EQ(waiting.status, 409) << waiting.body;
  EXPECT_EQ(waiting.json["error"].value("code", ""), "failed_precondition");
  EXPECT_EQ(Http("DELETE", "/v1/jobs/" + std::to_string(ids[1]), reader).status, 403);
  EXPECT_EQ(Http("DELETE", "/v1/jobs/999999", ops).status, 404);

  // Cancel all of queue default: a dry run counts, the real run reports an
  // operation that finishes in batches.
  const std::string cancel = R"({"action":"cancel","filter":{"queue":"default"})";
  HttpResult dry = Http("POST", "/v1/jobs/bulk", ops, cancel + R"(,"dry_run":true})");
  ASSERT_EQ(dry.status, 200) << dry.body;
  EXPECT_EQ(dry.json.value("count", -1), 11);
  EXPECT_TRUE(JobInState(ids[2], warden::JobState::kAvailable)) << "a dry run changes nothing";
  EXPECT_EQ(Http("POST", "/v1/jobs/bulk", reader, cancel + "}").status, 403);
  HttpResult started = Http("POST", "/v1/jobs/bulk", ops, cancel + "}");
  ASSERT_EQ(started.status, 202) << started.body;
  EXPECT_EQ(started.json.value("total", -1), 11);
  const std::string op = "/v1/jobs/bulk/" + std::to_string(started.json.value("id", 0));
  Json done;
  ASSERT_TRUE(WaitFor([&] {
    done = Http("GET", op, reader).json;
    return done.value("state", "") == "done";
  })) << done.dump();
  EXPECT_EQ(done.value("done", -1), 11);
  EXPECT_TRUE(JobInState(ids[0], warden::JobState::kAvailable)) << "other queue";
  EXPECT_TRUE(JobInState(ids[11], warden::JobState::kCancelled));

  HttpResult one = Http("DELETE", "/v1/jobs/" + std::to_string(ids[11]), ops);
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_TRUE(one.json.value("deleted", false));
  EXPECT_EQ(Http("GET", "/v1/jobs/" + std::to_string(ids[11]), reader).status, 404);

  HttpResult del = Http("POST", "/v1/jobs/bulk", ops,
                        R"({"action":"delete","filter":{"state":["cancelled","available"]}})");
  ASSERT_EQ(del.status, 202) << del.body;
  EXPECT_EQ(del.json.value("total", -1), 10) << "available jobs are out of a delete's scope";
  ASSERT_TRUE(WaitFor([&] {
    return Http("GET", "/v1/jobs?state=cancelled", reader).json.value("total", -1) == 0;
  }));
  HttpResult listed = Http("GET", "/v1/jobs/bulk", reader);
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(listed.json["operations"].size(), 2u);

  for (const std::string bad :
       {R"({"action":"explode","filter":{}})", R"({"action":"retry","filter":{"colour":1}})",
        R"({"action":"retry","filter":{"state":["running"]}})", R"({"action":"retry","x":1})",
        R"({"action":"retry","dry_run":"yes"})", R"([1])"}) {
    HttpResult r = Http("POST", "/v1/jobs/bulk", ops, bad);
    EXPECT_EQ(r.status, 400) << bad << ": " << r.body;
  }
  HttpResult audit = Http("GET", "/v1/audit", reader);
  const std::string log = audit.json.dump();
  EXPECT_TRUE(Has(log, "jobs.bulk_cancel.done")) << log;
  EXPECT_TRUE(Has(log, "jobs.bulk_delete")) << log;
  EXPECT_TRUE(Has(log, "\"job.delete\"")) << log;
  EXPECT_TRUE(Has(log, "token:ops")) << log;
}

// A real `warden serve` SIGKILLed half-way through a bulk retry, then
// started again: the operation finishes, and no job is touched twice.
// Between the two, the test cancels again every job the first server had
// retried: a second retry would make them available again.
TEST_P(HttpApiTest, ABulkOperationSurvivesASigkilledServer) {
  const std::string ops = Token("ops", "operate");
  constexpr int kJobs = 3000;
  std::vector<warden::JobSpec> specs(kJobs);
  for (auto& s : specs) s.task = "t";
  const std::vector<int64_t> ids = EnqueueMany(specs);
  warden::JobFilter all;
  auto cancelled = client().BulkStart(warden::BulkAction::kCancel, all);
  ASSERT_TRUE(cancelled.has_value()) << cancelled.error().ToString();
  warden::Client::BulkRunOptions fast;
  fast.only = cancelled->id;
  ASSERT_TRUE(client().BulkRun("test", fast).has_value());

  const std::vector<std::string> flags = {"--bulk-batch", "100", "--bulk-pause", "30ms",
                                          "--bulk-lease", "2s"};
  StartServer(flags);
  HttpResult started =
      Http("POST", "/v1/jobs/bulk", ops, R"({"action":"retry","filter":{"state":"cancelled"}})");
  ASSERT_EQ(started.status, 202) << started.body;
  const int64_t op_id = started.json.value("id", int64_t{0});
  EXPECT_EQ(started.json.value("total", -1), kJobs);
  ASSERT_TRUE(WaitFor([&] { return client().BulkGet(op_id).value().done >= 500; }));
  server().Kill();  // SIGKILL, mid-operation
  // A COMMIT sent just before the kill may still land: let it.
  std::this_thread::sleep_for(Millis(500));
  const warden::BulkOp at_kill = client().BulkGet(op_id).value();
  ASSERT_EQ(at_kill.state, warden::BulkState::kRunning) << "killed half-way: " << at_kill.done;
  ASSERT_LT(at_kill.done, kJobs);
  // Every job the first server retried (ids at or above the cursor) is
  // cancelled again; those below it are still cancelled, not yet reached.
  auto again = client().BulkStart(warden::BulkAction::kCancel, all);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->total, at_kill.done);
  fast.only = again->id;
  ASSERT_TRUE(client().BulkRun("test", fast).has_value());

  StartServer(flags);
  warden::BulkOp end;
  ASSERT_TRUE(WaitFor(
      [&] {
        end = client().BulkGet(op_id).value();
        return end.state == warden::BulkState::kDone;
      },
      Millis(60'000)))
      << end.done;
  EXPECT_EQ(end.done, kJobs) << "each job once: " << at_kill.done << " before the kill";
  int64_t available = 0, recancelled = 0;
  for (int64_t id : ids) {
    const auto job = GetJob(id);
    ASSERT_TRUE(job.has_value());
    if (id >= at_kill.cursor) {
      recancelled += job->state == warden::JobState::kCancelled;
    } else {
      available += job->state == warden::JobState::kAvailable;
    }
  }
  EXPECT_EQ(recancelled, at_kill.done) << "not retried a second time";
  EXPECT_EQ(available, kJobs - at_kill.done) << "the rest, retried after the restart";
  EXPECT_TRUE(Has(server().Stderr(), "bulk operation " + std::to_string(op_id)))
      << server().Stderr();
}

// A server stopped gracefully (SIGTERM) half-way gives its operation up
// between two batches: the next server takes it at once, without waiting
// out the lease (10 s by default).
TEST_P(HttpApiTest, ASigtermedServerHandsItsOperationOverAtOnce) {
  const std::string ops = Token("ops", "operate");
  constexpr int kJobs = 2000;
  std::vector<warden::JobSpec> specs(kJobs);
  for (auto& s : specs) s.task = "t";
  EnqueueMany(specs);
  StartServer({"--bulk-batch", "100", "--bulk-pause", "50ms"});
  HttpResult started =
      Http("POST", "/v1/jobs/bulk", ops, R"({"action":"cancel","filter":{"state":"available"}})");
  ASSERT_EQ(started.status, 202) << started.body;
  const int64_t op_id = started.json.value("id", int64_t{0});
  ASSERT_TRUE(WaitFor([&] { return client().BulkGet(op_id).value().done >= 300; }));
  ASSERT_TRUE(server().Signal(SIGTERM));
  ASSERT_TRUE(WaitFor([&] { return server().Exited(); }));
  const warden::BulkOp given_up = client().BulkGet(op_id).value();
  ASSERT_EQ(given_up.state, warden::BulkState::kRunning) << given_up.done;
  EXPECT_EQ(given_up.owner, "") << "released on the way out";
  const auto restarted = std::chrono::steady_clock::now();
  StartServer();
  ASSERT_TRUE(WaitFor([&] { return client().BulkGet(op_id).value().state ==
                                   warden::BulkState::kDone; }));
  EXPECT_LT(std::chrono::steady_clock::now() - restarted, Millis(8000))
      << "taken at once, not after the 10 s lease";
  EXPECT_EQ(client().BulkGet(op_id).value().done, kJobs);
}

// Two servers on one database: one runs the operation (its lease keeps the
// other off), the job count comes out exact, and only one says it finished.
TEST_P(HttpApiTest, TwoServersOnOneDatabaseRunAnOperationOnce) {
  const std::string ops = Token("ops", "operate");
  constexpr int kJobs = 1200;
  std::vector<warden::JobSpec> specs(kJobs);
  for (auto& s : specs) s.task = "t";
  EnqueueMany(specs);
  const std::vector<std::string> flags = {"--bulk-batch", "100", "--bulk-pause", "20ms"};
  StartServer(flags);
  warden::testing::Child& first = server();
  StartServer(flags);  // Http() now talks to the second
  warden::testing::Child& second = server();
  HttpResult started =
      Http("POST", "/v1/jobs/bulk", ops, R"({"action":"cancel","filter":{"state":"available"}})");
  ASSERT_EQ(started.status, 202) << started.body;
  const int64_t op_id = started.json.value("id", int64_t{0});
  std::set<std::string> owners;
  warden::BulkOp op;
  ASSERT_TRUE(WaitFor([&] {
    op = client().BulkGet(op_id).value();
    if (!op.owner.empty()) owners.insert(op.owner);
    return op.state == warden::BulkState::kDone;
  }));
  EXPECT_EQ(op.done, kJobs);
  EXPECT_EQ(op.batches, kJobs / 100 + 1);
  EXPECT_EQ(owners.size(), 1u) << "one runner held it throughout";
  const std::string done = "bulk operation " + std::to_string(op_id) + " (cancel) done";
  // Logged just after the last batch commits.
  EXPECT_TRUE(WaitFor([&] { return Has(first.Stderr(), done) || Has(second.Stderr(), done); }));
  EXPECT_NE(Has(first.Stderr(), done), Has(second.Stderr(), done))
      << first.Stderr() << "\n---\n" << second.Stderr();
  EXPECT_EQ(client().BulkCount(warden::BulkAction::kCancel, warden::JobFilter{}).value(), 0);
}

// The node registry over HTTP: what `warden nodes` does, with its audit
// entries by the token; a forced removal hands a live worker's job back.
TEST_P(HttpApiTest, NodesAreListedAddedDisabledRemovedAndSynced) {
  const std::string reader = Token("reader", "read");
  const std::string ops = Token("ops", "operate");
  StartServer();
  // The node `name` as GET /v1/nodes lists it ({} if it does not).
  auto node = [&](const std::string& name) {
    const HttpResult r = Http("GET", "/v1/nodes", reader);
    for (const Json& n : r.json["nodes"]) {
      if (n.value("name", "") == name) return n;
    }
    return Json::object();
  };
  Worker& a = StartWorker("a",
                          FastFlags({{"--node", "n1"},
                                     {"--shutdown-timeout", "30s"},  // a drain keeps its job
                                     {"--poll-interval", "50ms"}}),
                          1);
  const int64_t id = Add(Job("log start; sleep 60"));
  ASSERT_TRUE(WaitFor([&] { return HolderPid(id) == a.pid(); }, Millis(20'000)));

  // A live worker's node is listed before any is registered.
  HttpResult listed = Http("GET", "/v1/nodes", reader);
  ASSERT_EQ(listed.status, 200) << listed.body;
  ASSERT_EQ(listed.json["nodes"].size(), 1u) << listed.body;
  EXPECT_EQ(listed.json["nodes"][0].value("name", ""), "n1");
  EXPECT_FALSE(listed.json["nodes"][0].value("registered", true));
  EXPECT_EQ(listed.json["nodes"][0].value("live_workers", 0), 1);
  EXPECT_EQ(listed.json["nodes"][0].value("running", 0), 1);

  // The listing is `warden nodes --json`'s, element for element.
  HttpResult added = Http("PUT", "/v1/nodes/n2", ops, R"({"capacity": 4})");
  ASSERT_EQ(added.status, 200) << added.body;
  EXPECT_TRUE(added.json.value("changed", false));
  EXPECT_FALSE(Http("PUT", "/v1/nodes/n2", ops, R"({"capacity": 4})").json.value("changed", true));
  listed = Http("GET", "/v1/nodes", reader);
  CliResult cli = Cli({"nodes"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  Json http_nodes = listed.json["nodes"];
  Json cli_nodes = cli.json;
  for (Json* list : {&http_nodes, &cli_nodes}) {
    for (Json& n : *list) n.erase("updated_at");  // written at the add, read twice
  }
  EXPECT_EQ(http_nodes, cli_nodes) << listed.body << "\n" << cli.out;
  // By name, registered or not.
  ASSERT_EQ(listed.json["nodes"].size(), 2u) << listed.body;
  EXPECT_EQ(listed.json["nodes"][0].value("name", ""), "n1");
  EXPECT_EQ(listed.json["nodes"][1].value("name", ""), "n2");
  EXPECT_EQ(listed.json["nodes"][1]["capacity"], 4);
  EXPECT_TRUE(listed.json["nodes"][1].value("registered", false));
  // No body keeps the capacity; null removes it.
  EXPECT_EQ(Http("PUT", "/v1/nodes/n2", ops).status, 200);
  EXPECT_EQ(node("n2")["capacity"], 4);
  EXPECT_EQ(Http("PUT", "/v1/nodes/n2", ops, R"({"capacity": null})").status, 200);
  EXPECT_TRUE(node("n2")["capacity"].is_null());

  HttpResult off = Http("POST", "/v1/nodes/n2/disable", ops);
  ASSERT_EQ(off.status, 200) << off.body;
  EXPECT_EQ(off.json, Json({{"node", "n2"}, {"enabled", false}, {"changed", true}}));
  EXPECT_FALSE(node("n2").value("enabled", true));
  EXPECT_FALSE(node("n2").value("takes_work", true));
  EXPECT_FALSE(Http("POST", "/v1/nodes/n2/disable", ops).json.value("changed", true));
  EXPECT_EQ(Http("POST", "/v1/nodes/n2/enable", ops).json.value("changed", false), true);
  HttpResult typo = Http("POST", "/v1/nodes/n9/disable", ops);
  EXPECT_EQ(typo.status, 404) << typo.body;
  EXPECT_EQ(Http("DELETE", "/v1/nodes/n9", ops).status, 404);

  // A sync: dry first (nothing changes), then for real: n2 goes.
  HttpResult dry =
      Http("POST", "/v1/nodes/sync", ops, R"({"nodes": ["n1", {"name": "n3"}], "dry_run": true})");
  ASSERT_EQ(dry.status, 200) << dry.body;
  EXPECT_EQ(dry.json["added"], Json({"n1", "n3"})) << dry.body;
  EXPECT_EQ(dry.json["removed"], Json({"n2"})) << dry.body;
  EXPECT_TRUE(dry.json.value("dry_run", false));
  EXPECT_FALSE(node("n1").value("registered", true)) << "a dry run changes nothing";
  EXPECT_TRUE(node("n3").empty()) << "a dry run changes nothing";
  HttpResult empty = Http("POST", "/v1/nodes/sync", ops, R"({"nodes": []})");
  EXPECT_EQ(empty.status, 400) << empty.body;
  EXPECT_TRUE(Has(empty.json["error"].value("message", ""), "allow_empty")) << empty.body;
  HttpResult sync = Http("POST", "/v1/nodes/sync", ops, R"({"nodes": ["n1", "n3"]})");
  ASSERT_EQ(sync.status, 200) << sync.body;
  EXPECT_EQ(sync.json["removed"], Json({"n2"})) << sync.body;
  EXPECT_FALSE(sync.json.value("dry_run", true));
  EXPECT_TRUE(node("n1").value("registered", false));
  EXPECT_FALSE(node("n2").value("present", true));

  // A plain removal: the live worker keeps its job (the machine may be up)...
  HttpResult removed = Http("DELETE", "/v1/nodes/n1", ops);
  ASSERT_EQ(removed.status, 200) << removed.body;
  EXPECT_TRUE(removed.json.value("changed", false));
  EXPECT_EQ(removed.json.value("workers_released", -1), 0);
  EXPECT_EQ(HolderPid(id), a.pid());
  EXPECT_FALSE(node("n1").value("takes_work", true));
  // ...until forced: its worker is released and its job is available again.
  HttpResult forced = Http("DELETE", "/v1/nodes/n1?force=true", ops);
  ASSERT_EQ(forced.status, 200) << forced.body;
  EXPECT_FALSE(forced.json.value("changed", true)) << "removed already";
  EXPECT_EQ(forced.json.value("workers_released", 0), 1) << forced.body;
  EXPECT_EQ(forced.json.value("jobs_recovered", 0), 1) << forced.body;
  EXPECT_NE(HolderPid(id), a.pid());

  // Every change is audited as the token's, with the CLI's actions.
  HttpResult audit = Http("GET", "/v1/audit", reader);
  ASSERT_EQ(audit.status, 200);
  std::vector<std::string> actions;
  for (const Json& e : audit.json["entries"]) {
    if (e.value("action", "").rfind("node.", 0) != 0) continue;
    EXPECT_EQ(e.value("actor", ""), "token:ops") << e.dump();
    actions.push_back(e.value("action", ""));
  }
  const std::vector<std::string> want = {
      "node.remove.force", "node.remove", "node.sync", "node.enable", "node.disable",
      "node.disable", "node.add", "node.add", "node.add", "node.add"};  // a dry run: none
  EXPECT_EQ(actions, want) << audit.body;
}

TEST_P(HttpApiTest, NodeRoutesRefuseBadInputAndReadTokens) {
  const std::string reader = Token("reader", "read");
  const std::string ops = Token("ops", "operate");
  StartServer();
  ASSERT_EQ(Http("PUT", "/v1/nodes/n1", ops).status, 200);

  // A read token lists, and changes nothing.
  EXPECT_EQ(Http("GET", "/v1/nodes", reader).status, 200);
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"PUT", "/v1/nodes/n2"},
           {"POST", "/v1/nodes/n1/disable"},
           {"POST", "/v1/nodes/n1/enable"},
           {"DELETE", "/v1/nodes/n1"},
           {"POST", "/v1/nodes/sync"}}) {
    HttpResult r = Http(method, path, reader, path == "/v1/nodes/sync" ? R"({"nodes":[]})" : "");
    EXPECT_EQ(r.status, 403) << method << " " << path << ": " << r.body;
    EXPECT_EQ(r.json["error"].value("code", ""), "forbidden") << r.body;
  }

  struct Bad {
    std::string method, path, body;
    int status;
    std::string code, says;
  };
  const std::vector<Bad> bad = {
      {"PUT", "/v1/nodes/n1", "{bad", 400, "invalid_json", "not valid JSON"},
      {"PUT", "/v1/nodes/n1", "[4]", 400, "invalid_argument", "{\"capacity\": N or null}"},
      {"PUT", "/v1/nodes/n1", R"({"capacity": "4"})", 400, "invalid_argument",
       "\"capacity\" must be a whole number from 1 to 1000000, or null"},
      {"PUT", "/v1/nodes/n1", R"({"capacity": 1.5})", 400, "invalid_argument", "whole number"},
      {"PUT", "/v1/nodes/n1", R"({"capacity": 0})", 400, "invalid_argument",
       "a node's capacity must be from 1 to 1000000"},
      {"PUT", "/v1/nodes/n1", R"({"capacity": 18446744073709551615})", 400, "invalid_argument",
       "a node's capacity must be from 1 to 1000000"},
      {"PUT", "/v1/nodes/n1", R"({"cap": 4})", 400, "invalid_argument", "unknown member \"cap\""},
      {"PUT", "/v1/nodes/web%201", "", 400, "invalid_argument",
       "node name 'web 1' may hold only letters, digits and . - _ :"},
      {"PUT", "/v1/nodes/n1?force=true", "", 400, "invalid_argument",
       "unknown query parameter 'force'"},
      {"DELETE", "/v1/nodes/n1?force=yes", "", 400, "invalid_argument",
       "query parameter 'force' must be true or false"},
      {"POST", "/v1/nodes/sync", "", 400, "invalid_argument", "the body must be {\"nodes\""},
      {"POST", "/v1/nodes/sync", "{bad", 400, "invalid_json", "not valid JSON"},
      {"POST", "/v1/nodes/sync", R"({"nodes": "n1"})", 400, "invalid_argument",
       "\"nodes\" must be an array"},
      {"POST", "/v1/nodes/sync", R"({"nodes": ["n1"], "dry_run": "yes"})", 400,
       "invalid_argument", "\"dry_run\" must be true or false"},
      {"POST", "/v1/nodes/sync", R"({"nodes": ["n1"], "dryrun": true})", 400, "invalid_argument",
       "unknown member \"dryrun\""},
      {"POST", "/v1/nodes/sync", R"({"nodes": [{"name": "n1", "cap": 2}]})", 400,
       "invalid_argument", "nodes: inventory element 0: unknown key 'cap'"},
      {"POST", "/v1/nodes/sync", R"({"nodes": ["a b"]})", 400, "invalid_argument",
       "nodes: inventory element 0: node name 'a b' may hold only letters"},
      {"POST", "/v1/nodes/sync", R"({"nodes": ["n1", "n1"]})", 400, "invalid_argument",
       "the inventory names node 'n1' twice"},
      {"POST", "/v1/nodes/sync", R"({"nodes": [{"name": "n1", "capacity": 0}]})", 400,
       "invalid_argument", "a node's capacity must be from 1 to 1000000"},
      {"POST", "/v1/nodes/sync", R"({"nodes": []})", 400, "invalid_argument",
       "send \"allow_empty\": true if that is meant"},
      {"POST", "/v1/nodes/n9/disable", "", 404, "not_found", "no node 'n9'"},
      {"DELETE", "/v1/nodes/n9", "", 404, "not_found", "node 'n9' is not registered"},
      {"GET", "/v1/nodes?bogus=1", "", 400, "invalid_argument",
       "unknown query parameter 'bogus'"},
      {"GET", "/v1/nodes/n1", "", 405, "method_not_allowed", "PUT, DELETE"},
      {"GET", "/v1/nodes/n1/disable", "", 405, "method_not_allowed", "POST"},
  };
  for (const Bad& b : bad) {
    HttpResult r = Http(b.method, b.path, ops, b.body);
    EXPECT_EQ(r.status, b.status) << b.method << " " << b.path << " " << b.body << ": " << r.body;
    EXPECT_EQ(r.json["error"].value("code", ""), b.code) << r.body;
    EXPECT_TRUE(Has(r.json["error"].value("message", ""), b.says))
        << b.method << " " << b.path << " " << b.body << ": " << r.body;
  }
  // Nothing of it changed the registry, nor was audited but the one add.
  HttpResult listed = Http("GET", "/v1/nodes", reader);
  ASSERT_EQ(listed.json["nodes"].size(), 1u) << listed.body;
  EXPECT_TRUE(listed.json["nodes"][0]["capacity"].is_null());
  EXPECT_TRUE(listed.json["nodes"][0].value("enabled", false));
  int node_entries = 0;
  const HttpResult audit = Http("GET", "/v1/audit", reader);
  for (const Json& e : audit.json["entries"]) {
    node_entries += e.value("action", "").rfind("node.", 0) == 0;
  }
  EXPECT_EQ(node_entries, 1);
  // An empty sync with allow_empty removes the fleet, as the CLI's.
  HttpResult emptied =
      Http("POST", "/v1/nodes/sync", ops, R"({"nodes": [], "allow_empty": true})");
  ASSERT_EQ(emptied.status, 200) << emptied.body;
  EXPECT_EQ(emptied.json["removed"], Json({"n1"})) << emptied.body;
}

INSTANTIATE_TEST_SUITE_P(Backends, HttpApiTest, ::testing::ValuesIn(AllBackends()), BackendName);

}  // namespace
}  // namespace wt
