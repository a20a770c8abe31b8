// What an operator met over HTTP that the CLI already did better (issue 35,
// section 6), with a real `warden serve` on both backends: a bulk request
// with no filter must say "all", enqueue answers whether a worker runs the
// job (and can require one), a job that existed already is 200, a bad
// state names the good ones, GET /v1/whoami says a token's scope, and
// GET /v1/stats/history gives back the stats' samples.
#include <chrono>
#include <set>
#include <thread>

#include "http_fixture.h"

namespace wt {
namespace {

class HttpOperatorEdgesTest : public HttpApiTest {};

TEST_P(HttpOperatorEdgesTest, ABulkRequestWithNoFilterMustSayAll) {
  const std::string ops = Token("ops", "operate");
  std::vector<warden::JobSpec> specs(3);
  for (auto& s : specs) s.task = "t";
  const std::vector<int64_t> ids = EnqueueMany(specs);
  StartServer();

  for (const std::string body :
       {R"({"action":"cancel"})", R"({"action":"cancel","filter":{}})",
        R"({"action":"cancel","dry_run":true})", R"({"action":"cancel","all":false})"}) {
    HttpResult r = Http("POST", "/v1/jobs/bulk", ops, body);
    EXPECT_EQ(r.status, 400) << body << ": " << r.body;
    EXPECT_EQ(r.json["error"].value("code", ""), "invalid_argument") << r.body;
    EXPECT_TRUE(Has(r.json["error"].value("message", ""),
                    "a bulk cancel with no filter would act on every job: give a filter "
                    "(\"filter\": {\"state\": ...}) or send \"all\": true"))
        << r.body;
  }
  HttpResult typed = Http("POST", "/v1/jobs/bulk", ops, R"({"action":"cancel","all":"yes"})");
  EXPECT_EQ(typed.status, 400) << typed.body;
  for (const int64_t id : ids) EXPECT_TRUE(JobInState(id, warden::JobState::kAvailable));
  HttpResult listed = Http("GET", "/v1/jobs/bulk", ops);
  EXPECT_EQ(listed.json["operations"].size(), 0u) << "no operation recorded: " << listed.body;

  HttpResult dry =
      Http("POST", "/v1/jobs/bulk", ops, R"({"action":"cancel","all":true,"dry_run":true})");
  ASSERT_EQ(dry.status, 200) << dry.body;
  EXPECT_EQ(dry.json.value("count", -1), 3);
  HttpResult all = Http("POST", "/v1/jobs/bulk", ops, R"({"action":"cancel","all":true})");
  ASSERT_EQ(all.status, 202) << all.body;
  EXPECT_EQ(all.json.value("total", -1), 3);
  EXPECT_TRUE(WaitFor([&] { return JobInState(ids[2], warden::JobState::kCancelled); }));
}

TEST_P(HttpOperatorEdgesTest, AJobThatExistedAlreadyIs200AndANewOne201) {
  const std::string producer = Token("producer", "enqueue");
  StartServer();
  const std::string job = R"({"task":"email","unique_key":"welcome-1"})";
  HttpResult first = Http("POST", "/v1/jobs", producer, job);
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_TRUE(first.json.value("created", false));
  HttpResult again = Http("POST", "/v1/jobs", producer, job);
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_FALSE(again.json.value("created", true));
  EXPECT_EQ(again.json.value("id", 0), first.json.value("id", -1));

  // A batch: 201 if any job is new, 200 if none is.
  const std::string old_only = R"({"jobs":[)" + job + "]}";
  HttpResult batch_old = Http("POST", "/v1/jobs/batch", producer, old_only);
  EXPECT_EQ(batch_old.status, 200) << batch_old.body;
  HttpResult batch_new =
      Http("POST", "/v1/jobs/batch", producer, R"({"jobs":[)" + job + R"(,{"task":"email"}]})");
  EXPECT_EQ(batch_new.status, 201) << batch_new.body;
  ASSERT_EQ(batch_new.json["jobs"].size(), 2u) << batch_new.body;
  EXPECT_FALSE(batch_new.json["jobs"][0].value("created", true));
  EXPECT_TRUE(batch_new.json["jobs"][1].value("created", false));
}

TEST_P(HttpOperatorEdgesTest, EnqueueSaysWhetherAWorkerRunsTheJobAndCanRequireOne) {
  const std::string producer = Token("producer", "enqueue");
  StartServer();
  // No worker: said (as `warden add` says it), and the job waits.
  HttpResult waits = Http("POST", "/v1/jobs", producer, R"({"task":"resize","queue":"media"})");
  ASSERT_EQ(waits.status, 201) << waits.body;
  EXPECT_EQ(waits.json["served"], Json(false)) << waits.body;
  const int64_t id = waits.json.value("id", int64_t{0});
  EXPECT_EQ(waits.json.value("note", ""),
            "no active worker runs job " + std::to_string(id) +
                " yet; it waits until one does (start one with: warden worker --queues media "
                "--task resize=COMMAND)")
      << waits.body;
  // require_worker: refused, nothing added; the batch names the job.
  HttpResult refused = Http("POST", "/v1/jobs?require_worker=true", producer,
                            R"({"task":"resize","queue":"media"})");
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(refused.json["error"].value("code", ""), "failed_precondition");
  EXPECT_EQ(refused.json["error"].value("message", ""),
            "no active worker runs task resize on queue media (start one with: warden worker "
            "--queues media --task resize=COMMAND); nothing was added")
      << refused.body;
  HttpResult refused_batch =
      Http("POST", "/v1/jobs/batch?require_worker=true", producer,
           R"({"jobs":[{"task":"other"},{"task":"resize","queue":"media"}]})");
  EXPECT_EQ(refused_batch.status, 409) << refused_batch.body;
  EXPECT_TRUE(Has(refused_batch.json["error"].value("message", ""),
                  "jobs[0]: no active worker runs task other on queue default"))
      << refused_batch.body;
  EXPECT_EQ(Http("GET", "/v1/jobs", producer).json.value("total", -1), 1) << "nothing added";
  EXPECT_EQ(Http("POST", "/v1/jobs?require_worker=maybe", producer, R"({"task":"x"})").status, 400);
  EXPECT_EQ(Http("POST", "/v1/jobs?bogus=1", producer, R"({"task":"x"})").status, 400);

  // With a worker that runs it: served, no note, and require_worker passes.
  StartWorker("w", {"--queues", "media", "--task", "resize=true"});
  HttpResult runs = Http("POST", "/v1/jobs?require_worker=true", producer,
                         R"({"task":"resize","queue":"media"})");
  ASSERT_EQ(runs.status, 201) << runs.body;
  EXPECT_EQ(runs.json["served"], Json(true)) << runs.body;
  EXPECT_FALSE(runs.json.contains("note")) << runs.body;
  HttpResult batch = Http("POST", "/v1/jobs/batch", producer,
                          R"({"jobs":[{"task":"resize","queue":"media"},{"task":"other"}]})");
  ASSERT_EQ(batch.status, 201) << batch.body;
  EXPECT_EQ(batch.json["jobs"][0]["served"], Json(true)) << batch.body;
  EXPECT_EQ(batch.json["jobs"][1]["served"], Json(false)) << batch.body;
  EXPECT_TRUE(Has(batch.json["jobs"][1].value("note", ""), "--task other=COMMAND")) << batch.body;
}

TEST_P(HttpOperatorEdgesTest, ABadStateFilterNamesTheGoodStates) {
  const std::string ops = Token("ops", "operate");
  StartServer();
  const std::string states =
      "(scheduled, available, running, succeeded, retryable, dead, cancelled, expired)";
  HttpResult listed = Http("GET", "/v1/jobs?state=lost", ops);
  EXPECT_EQ(listed.status, 400) << listed.body;
  EXPECT_TRUE(Has(listed.json["error"].value("message", ""), "'lost' is not a job state " + states))
      << listed.body;
  HttpResult bulk =
      Http("POST", "/v1/jobs/bulk", ops, R"({"action":"retry","filter":{"state":"deadd"}})");
  EXPECT_EQ(bulk.status, 400) << bulk.body;
  EXPECT_TRUE(Has(bulk.json["error"].value("message", ""), "'deadd' is not a job state " + states))
      << bulk.body;
  // The CLI's words, from the same list.
  CliResult cli = Cli({"jobs", "--state", "lost"}, false);
  EXPECT_EQ(cli.exit_code, 2) << cli.err;
  EXPECT_TRUE(Has(cli.err, "unknown state 'lost' " + states)) << cli.err;
  // A bad last-error kind likewise: 400, with the kinds.
  const std::string kinds = "(error, crash, timeout, lost, released, crash_loop, cancelled)";
  HttpResult kind = Http("GET", "/v1/jobs?error_kind=crashed", ops);
  EXPECT_EQ(kind.status, 400) << kind.body;
  EXPECT_EQ(kind.json["error"].value("message", ""),
            "filter: 'crashed' is not an error kind " + kinds)
      << kind.body;
  HttpResult bulk_kind =
      Http("POST", "/v1/jobs/bulk", ops, R"({"action":"retry","filter":{"error_kind":"Lost"}})");
  EXPECT_EQ(bulk_kind.status, 400) << bulk_kind.body;
  // A good one lists the jobs whose last error is of it (a cancel's).
  const int64_t id = Add("true");
  Add("true");
  ASSERT_EQ(Cli({"jobs", "cancel", std::to_string(id)}).exit_code, 0);
  HttpResult cancelled = Http("GET", "/v1/jobs?error_kind=cancelled", ops);
  EXPECT_EQ(cancelled.status, 200) << cancelled.body;
  EXPECT_EQ(cancelled.json.value("total", -1), 1) << cancelled.body;
  ASSERT_EQ(cancelled.json["jobs"].size(), 1u) << cancelled.body;
  EXPECT_EQ(cancelled.json["jobs"][0].value("id", int64_t{0}), id);
  EXPECT_EQ(Http("GET", "/v1/jobs?error_kind=crash_loop", ops).json.value("total", -1), 0);
  EXPECT_EQ(Http("GET", "/v1/jobs?error_kind=", ops).json.value("total", -1), 2);
  // rescued: a boolean, none of these jobs.
  EXPECT_EQ(Http("GET", "/v1/jobs?rescued=true", ops).json.value("total", -1), 0);
  HttpResult rescued = Http("GET", "/v1/jobs?rescued=yes", ops);
  EXPECT_EQ(rescued.status, 400) << rescued.body;
  EXPECT_EQ(rescued.json["error"].value("message", ""),
            "query parameter 'rescued' must be true or false")
      << rescued.body;
}

// A typo paused nothing and left a phantom paused queue; `nodes disable`
// refused the same. Refused now, over HTTP and by the CLI, unless "create"
// says it is meant (a queue paused before a deploy's first job).
TEST_P(HttpOperatorEdgesTest, PausingAQueueNothingNamesIsRefusedUnlessSaid) {
  const std::string ops = Token("ops", "operate");
  warden::JobSpec mail;
  mail.task = "t";
  mail.queue = "mail";
  EnqueueMany({mail});
  StartServer();

  CliResult typo = Cli({"queues", "pause", "mial"}, false);
  EXPECT_EQ(typo.exit_code, 1) << typo.err;
  EXPECT_EQ(typo.err,
            "warden: no queue 'mial': no job, pause, limit or live worker names it (did you "
            "mean 'mail'?); to pause it before its first job: warden queues pause --create "
            "mial\n");
  HttpResult http = Http("POST", "/v1/queues/mial/pause", ops);
  EXPECT_EQ(http.status, 404) << http.body;
  EXPECT_EQ(http.json["error"].value("code", ""), "not_found");
  EXPECT_TRUE(Has(http.json["error"].value("message", ""),
                  "no queue 'mial': no job, pause, limit or live worker names it (did you mean "
                  "'mail'?); to pause it before its first job, send {\"create\": true}"))
      << http.body;
  for (const std::string body : {R"({"create":"yes"})", R"({"crate":true})", "[1]"}) {
    EXPECT_EQ(Http("POST", "/v1/queues/mial/pause", ops, body).status, 400) << body;
  }
  HttpResult queues = Http("GET", "/v1/queues", ops);
  ASSERT_EQ(queues.json["queues"].size(), 1u) << "no phantom queue: " << queues.body;
  EXPECT_FALSE(Has(Http("GET", "/v1/audit", ops).body, "mial")) << "nothing audited";

  // A queue that exists, by its jobs or by a live worker that takes it.
  EXPECT_EQ(Cli({"queues", "pause", "mail"}).exit_code, 0);
  StartWorker("w", {"--queues", "media"});
  HttpResult media = Http("POST", "/v1/queues/media/pause", ops);
  EXPECT_EQ(media.status, 200) << media.body;

  // Said: paused before any job, by either.
  CliResult created = Cli({"queues", "pause", "--create", "deploy"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_TRUE(created.json.value("changed", false));
  HttpResult said = Http("POST", "/v1/queues/next/pause", ops, R"({"create":true})");
  ASSERT_EQ(said.status, 200) << said.body;
  EXPECT_TRUE(said.json.value("changed", false));
  // Paused now, so known: no "create" needed again.
  HttpResult again = Http("POST", "/v1/queues/next/pause", ops);
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_FALSE(again.json.value("changed", true));
  std::set<std::string> paused;
  const HttpResult listed = Http("GET", "/v1/queues", ops);
  for (const Json& q : listed.json["queues"]) {
    if (q.value("paused", false)) paused.insert(q.value("name", ""));
  }
  EXPECT_EQ(paused, (std::set<std::string>{"deploy", "mail", "media", "next"}));
}

// `retry` of a scheduled job ran it at once, though retry is for failed
// jobs: refused now, pointing at `jobs run-now` (and its route), which
// runs it now, its budgets kept, and is in the audit log as retry is.
TEST_P(HttpOperatorEdgesTest, RetryRefusesAScheduledJobAndRunNowRunsIt) {
  const std::string ops = Token("ops", "operate");
  const std::string reader = Token("reader", "read");
  StartServer();
  const int64_t later = Add("true", {"--delay", "1h"});
  const std::string n = std::to_string(later);
  const std::string refusal = "job " + n +
                              " is scheduled, not failed: retry is for dead, cancelled or expired "
                              "jobs; to run it before its time: warden jobs run-now " +
                              n + " (POST /v1/jobs/" + n + "/run-now)";
  CliResult cli = Cli({"jobs", "retry", n}, false);
  EXPECT_EQ(cli.exit_code, 1) << cli.err;
  EXPECT_EQ(cli.err, "warden: " + refusal + "\n");
  HttpResult http = Http("POST", "/v1/jobs/" + n + "/retry", ops);
  EXPECT_EQ(http.status, 409) << http.body;
  EXPECT_EQ(http.json["error"].value("message", ""), refusal) << http.body;
  EXPECT_TRUE(JobInState(later, warden::JobState::kScheduled));

  EXPECT_EQ(Http("POST", "/v1/jobs/" + n + "/run-now", reader).status, 403);
  EXPECT_EQ(Http("GET", "/v1/jobs/" + n + "/run-now", ops).status, 405);
  HttpResult now = Http("POST", "/v1/jobs/" + n + "/run-now", ops);
  ASSERT_EQ(now.status, 200) << now.body;
  EXPECT_EQ(now.json, Json({{"id", later}, {"state", "available"}}));
  HttpResult due = Http("POST", "/v1/jobs/" + n + "/run-now", ops);
  EXPECT_EQ(due.status, 409) << due.body;
  EXPECT_TRUE(Has(due.json["error"].value("message", ""), "is due already")) << due.body;
  StartWorker("w");
  EXPECT_TRUE(WaitFor([&] { return JobInState(later, warden::JobState::kSucceeded); }));
  EXPECT_EQ(GetJob(later)->attempt, 1);

  // The CLI's command, on a job the worker then runs.
  const int64_t other = Add("true", {"--delay", "1h"});
  CliResult ran = Cli({"jobs", "run-now", std::to_string(other)}, false);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out, "job " + std::to_string(other) + " is due now\n");
  EXPECT_TRUE(WaitFor([&] { return JobInState(other, warden::JobState::kSucceeded); }));
  CliResult finished = Cli({"jobs", "run-now", std::to_string(other)}, false);
  EXPECT_EQ(finished.exit_code, 1);
  EXPECT_TRUE(Has(finished.err,
                  "is succeeded: only a scheduled job, or a retryable one waiting "
                  "to retry, can be run now"))
      << finished.err;
  EXPECT_EQ(Http("POST", "/v1/jobs/999999/run-now", ops).status, 404);

  // Audited as retry is: who, and which job.
  int run_now = 0;
  const HttpResult audit = Http("GET", "/v1/audit", ops);
  for (const Json& e : audit.json["entries"]) {
    if (e.value("action", "") != "job.run_now") continue;
    ++run_now;
    const std::string target = e.value("target", "");
    EXPECT_TRUE((target == n && e.value("actor", "") == "token:ops") ||
                (target == std::to_string(other) && e.value("actor", "").rfind("cli:", 0) == 0))
        << e.dump();
  }
  EXPECT_EQ(run_now, 2);
}

// The dashboard hides the buttons a token may not press: it learns the
// scope here. The answer names the token and its scope, never its secret.
TEST_P(HttpOperatorEdgesTest, WhoAmISaysTheTokensScopeNeverTheToken) {
  const std::string reader = Token("reader", "read");
  const std::string ops = Token("ops", "operate");
  StartServer();
  HttpResult read = Http("GET", "/v1/whoami", reader);
  ASSERT_EQ(read.status, 200) << read.body;
  EXPECT_EQ(read.json, Json({{"actor", "token:reader"}, {"scope", "read"}}));
  EXPECT_FALSE(Has(read.body, reader.substr(reader.rfind('_') + 1))) << "the secret echoed";
  HttpResult op = Http("GET", "/v1/whoami", ops);
  EXPECT_EQ(op.json, Json({{"actor", "token:ops"}, {"scope", "operate"}})) << op.body;
  EXPECT_EQ(Http("GET", "/v1/whoami").status, 401);
  EXPECT_EQ(Http("POST", "/v1/whoami", ops).status, 405);
}

// The dashboard's charts began empty, and a reload emptied them: the
// server now keeps what GET /v1/stats answered, one sample a second at
// most, and GET /v1/stats/history gives them back.
TEST_P(HttpOperatorEdgesTest, StatsHistoryKeepsWhatTheStatsAnswered) {
  const std::string reader = Token("reader", "read");
  StartServer();
  HttpResult empty = Http("GET", "/v1/stats/history", reader);
  ASSERT_EQ(empty.status, 200) << empty.body;
  EXPECT_EQ(empty.json["samples"], Json::array()) << "nothing sampled before a read";
  EXPECT_EQ(empty.json.value("min_gap_ms", 0), 1000);
  EXPECT_EQ(empty.json.value("span_ms", 0), 600000);
  ASSERT_EQ(Http("GET", "/v1/stats", reader).status, 200);
  ASSERT_EQ(Http("GET", "/v1/stats", reader).status, 200);
  HttpResult one = Http("GET", "/v1/stats/history", reader);
  ASSERT_EQ(one.json["samples"].size(), 1u) << "a second within the gap is not kept: " << one.body;
  EXPECT_EQ(one.json["samples"][0].value("succeeded", -1), 0) << one.body;

  const int64_t id = Add("true");
  StartWorker("w");
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kSucceeded); }));
  // The gap is the stimulus: a read a second later is kept.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ASSERT_EQ(Http("GET", "/v1/stats", reader).status, 200);
  HttpResult two = Http("GET", "/v1/stats/history", reader);
  ASSERT_EQ(two.json["samples"].size(), 2u) << two.body;
  const Json& last = two.json["samples"][1];
  EXPECT_EQ(last.value("succeeded", -1), 1) << two.body;
  EXPECT_EQ(last.value("dead", -1), 0) << two.body;
  EXPECT_LT(two.json["samples"][0].value("at", ""), last.value("at", "")) << two.body;
  EXPECT_EQ(Http("POST", "/v1/stats/history", reader).status, 405);
  EXPECT_EQ(Http("GET", "/v1/stats/history").status, 401);
}

// A retry kept the old checkpoint with no way to start over: POST
// /v1/jobs/{id}/retry {"fresh": true} drops it (a plain retry keeps it),
// and so does a bulk retry's "fresh"; bad bodies are 400. The timeline
// says who retried the job, by which operation, and why it had died
// (issue 35, section 6).
TEST_P(HttpOperatorEdgesTest, AFreshRetryStartsOverAndTheTimelineSaysWhoRetriedIt) {
  const std::string ops = Token("ops", "operate");
  StartServer();
  StartWorker("w");
  const std::string cmd =
      "if [ \"$WARDEN_ATTEMPT\" = 1 ]; then echo 'checkpoint {\"i\":3}' >&3; fi; exit 1";
  const int64_t kept = Add(cmd, {"--max-attempts", "1"});
  const int64_t fresh = Add(cmd, {"--max-attempts", "1"});
  auto dead_after = [&](int64_t id, int runs) {
    return WaitFor([&] {
      auto j = GetJob(id);
      return j && j->state == warden::JobState::kDead && j->attempt == runs;
    });
  };
  ASSERT_TRUE(dead_after(kept, 1));
  ASSERT_TRUE(dead_after(fresh, 1));
  const std::string k = std::to_string(kept), f = std::to_string(fresh);

  for (const std::string body : {R"({"fresh":"yes"})", R"({"fresh":true,"start":1})", "[1]"}) {
    HttpResult r = Http("POST", "/v1/jobs/" + f + "/retry", ops, body);
    EXPECT_EQ(r.status, 400) << body << ": " << r.body;
    EXPECT_EQ(r.json["error"].value("code", ""), "invalid_argument") << r.body;
  }
  EXPECT_TRUE(JobInState(fresh, warden::JobState::kDead)) << "a refused retry changes nothing";
  HttpResult plain = Http("POST", "/v1/jobs/" + k + "/retry", ops);
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_EQ(plain.json, Json({{"id", kept}, {"state", "available"}, {"fresh", false}}));
  HttpResult over = Http("POST", "/v1/jobs/" + f + "/retry", ops, R"({"fresh":true})");
  ASSERT_EQ(over.status, 200) << over.body;
  EXPECT_EQ(over.json.value("fresh", false), true);
  ASSERT_TRUE(dead_after(kept, 2));
  ASSERT_TRUE(dead_after(fresh, 2));
  EXPECT_EQ(GetJob(kept)->checkpoint, (Json{{"i", 3}})) << "a plain retry keeps it";
  EXPECT_TRUE(GetJob(fresh)->checkpoint.is_null()) << "a fresh one starts over";

  HttpResult cancel =
      Http("POST", "/v1/jobs/bulk", ops, R"({"action":"cancel","all":true,"fresh":true})");
  EXPECT_EQ(cancel.status, 400) << cancel.body;
  EXPECT_TRUE(Has(cancel.json["error"].value("message", ""), "\"fresh\" is a retry's"))
      << cancel.body;
  HttpResult bulk = Http("POST", "/v1/jobs/bulk", ops,
                         R"({"action":"retry","filter":{"state":"dead"},"fresh":true})");
  ASSERT_EQ(bulk.status, 202) << bulk.body;
  EXPECT_EQ(bulk.json.value("fresh", false), true) << bulk.body;
  const int64_t op = bulk.json.value("id", int64_t{-1});
  ASSERT_TRUE(dead_after(kept, 3));
  EXPECT_TRUE(GetJob(kept)->checkpoint.is_null()) << "the bulk retry was fresh";

  HttpResult job = Http("GET", "/v1/jobs/" + k, ops);
  EXPECT_EQ(job.json.value("charged_attempts", -1), 1) << job.body;
  EXPECT_EQ(job.json.value("max_attempts", -1), 1) << job.body;
  EXPECT_EQ(job.json.value("attempt", -1), 3) << job.body;
  HttpResult timeline = Http("GET", "/v1/jobs/" + k + "/timeline", ops);
  ASSERT_EQ(timeline.status, 200) << timeline.body;
  std::vector<Json> retries;
  int ends = 0;
  for (const Json& e : timeline.json["events"]) {
    if (e.value("kind", "") == "operator") retries.push_back(e["evidence"]);
    if (e.value("kind", "") == "finished") {
      ++ends;
      EXPECT_EQ(e["evidence"].value("reason", ""), "attempts_exhausted") << e.dump();
      EXPECT_EQ(e.value("text", ""),
                "the job is dead: its attempts ran out (attempts 1/1, last error error)");
    }
  }
  EXPECT_EQ(ends, 3) << "each move to dead: " << timeline.body;
  ASSERT_EQ(retries.size(), 2u) << timeline.body;
  EXPECT_EQ(retries[0], Json({{"action", "retry"},
                              {"actor", "token:ops"},
                              {"op", nullptr},
                              {"fresh", false},
                              {"from", "dead"}}));
  EXPECT_EQ(retries[1], Json({{"action", "retry"},
                              {"actor", "token:ops"},
                              {"op", op},
                              {"fresh", true},
                              {"from", "dead"}}));
  HttpResult audit = Http("GET", "/v1/audit", ops);
  EXPECT_TRUE(Has(audit.body, R"({\"fresh\":true,\"job\":)" + f + "}")) << audit.body;
  EXPECT_TRUE(Has(audit.body, R"(\"fresh\":true,\"op\":)" + std::to_string(op)))
      << audit.body;
}

INSTANTIATE_TEST_SUITE_P(Backends, HttpOperatorEdgesTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
