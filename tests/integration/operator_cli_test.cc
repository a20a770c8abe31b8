// The operator commands with real workers: `queues pause` stops claims from
// a queue (a running job there finishes, other queues go on), `queues
// resume` wakes the workers at once; tokens are shown once and stored only
// hashed; every action is in `warden audit` under the user who ran it.
#include "harness.h"

namespace wt {
namespace {

class OperatorCliTest : public IntegrationTest {
 protected:
  Json Queue(const std::string& name) {
    CliResult r = Cli({"queues"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const Json& q : r.json) {
      if (q.value("name", "") == name) return q;
    }
    return Json::object();
  }
};

TEST_P(OperatorCliTest, APausedQueueWaitsWhileOthersRunAndResumeWakesTheWorkers) {
  std::vector<std::string> flags = FastFlags();
  flags.insert(flags.end(), {"--queues", "default,mail"});
  StartWorker("w", flags, 2);
  const int64_t running = Add(Job("log start; sleep 1; log end"), {"--queue", "mail"});
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(running, 1, "start"); }));

  CliResult paused = Cli({"queues", "pause", "mail"});
  ASSERT_EQ(paused.exit_code, 0) << paused.err;
  EXPECT_EQ(paused.json.value("changed", false), true);
  CliResult noted = Cli({"add", "--cmd", Job("log start"), "--queue", "mail"}, /*json=*/false);
  ASSERT_EQ(noted.exit_code, 0) << noted.err;
  const int64_t held = std::stoll(noted.out);
  EXPECT_NE(noted.err.find("queue mail is paused; job " + std::to_string(held) +
                           " waits until `warden queues resume mail`"),
            std::string::npos)
      << noted.err;
  const int64_t other = Add(Job("log start"));
  EXPECT_TRUE(WaitFor([&] { return JobInState(other, warden::JobState::kSucceeded); }));
  EXPECT_TRUE(WaitFor([&] { return JobInState(running, warden::JobState::kSucceeded); }))
      << "a job already running on a paused queue finishes";
  EXPECT_TRUE(StaysTrueFor([&] { return JobInState(held, warden::JobState::kAvailable); },
                           Millis(1500)));
  const Json q = Queue("mail");
  EXPECT_EQ(q.value("paused", false), true) << q.dump();
  EXPECT_EQ(q["jobs"].value("available", -1), 1) << q.dump();
  EXPECT_EQ(q.value("live_workers", -1), 1) << q.dump();

  CliResult resumed = Cli({"queues", "resume", "mail"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(WaitFor([&] { return JobInState(held, warden::JobState::kSucceeded); }));

  CliResult audit = Cli({"audit"});
  ASSERT_EQ(audit.exit_code, 0) << audit.err;
  ASSERT_GE(audit.json.size(), 2u) << audit.json.dump();
  EXPECT_EQ(audit.json[0].value("action", ""), "queue.resume");
  EXPECT_EQ(audit.json[1].value("action", ""), "queue.pause");
  EXPECT_EQ(audit.json[1].value("target", ""), "mail");
  EXPECT_EQ(audit.json[1].value("actor", "").rfind("cli:", 0), 0u) << audit.json.dump();
}

TEST_P(OperatorCliTest, ATokenIsShownOnceAndStoredOnlyAsAHash) {
  CliResult made = Cli({"tokens", "create", "ci", "--scope", "operate"}, /*json=*/false);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::string secret = made.out;
  secret.erase(secret.find_last_not_of('\n') + 1);
  EXPECT_EQ(secret.rfind("wdn_", 0), 0u) << secret;
  EXPECT_NE(made.err.find("shown this once"), std::string::npos) << made.err;

  CliResult listed = Cli({"tokens"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(listed.out.find(secret.substr(secret.rfind('_') + 1)), std::string::npos)
      << "a listing never shows a secret";
  ASSERT_EQ(listed.json.size(), 1u);
  EXPECT_EQ(listed.json[0].value("scope", ""), "operate");

  auto who = client().Authenticate(secret);
  ASSERT_TRUE(who.has_value()) << who.error().ToString();
  EXPECT_EQ(who->name, "ci");
  std::string wrong = secret;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  EXPECT_FALSE(client().Authenticate(wrong).has_value());

  CliResult bad_scope = Cli({"tokens", "create", "x", "--scope", "root"});
  EXPECT_EQ(bad_scope.exit_code, 2);
  EXPECT_NE(bad_scope.err.find("not one of read, enqueue, operate, admin"), std::string::npos)
      << bad_scope.err;
  CliResult digits = Cli({"tokens", "create", "42"});
  EXPECT_NE(digits.exit_code, 0);
  EXPECT_NE(digits.err.find("all digits"), std::string::npos) << digits.err;

  ASSERT_EQ(Cli({"tokens", "revoke", "ci"}).exit_code, 0);
  EXPECT_FALSE(client().Authenticate(secret).has_value()) << "revoked";
  CliResult again = Cli({"tokens", "revoke", "ci"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("no live token named 'ci'"), std::string::npos) << again.err;
}

// --exit-when-idle does not wait for a paused queue: its jobs are not work
// the worker can do now, and it says why they are left.
TEST_P(OperatorCliTest, AnIdleWorkerDoesNotWaitForAPausedQueue) {
  const int64_t held = Add(Job("log start"), {"--queue", "mail"});
  const int64_t runs = Add(Job("log start"));
  ASSERT_EQ(Cli({"queues", "pause", "mail"}).exit_code, 0);
  std::vector<std::string> argv = {WARDEN_BIN, "--db", db(), "worker", "--exit-when-idle",
                                   "--allow-cmd", "--queues", "default,mail"};
  const auto fast = FastFlags();
  argv.insert(argv.end(), fast.begin(), fast.end());
  CliResult r = RunToExit(argv, dir() + "/idle", Millis(60'000));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(JobInState(runs, warden::JobState::kSucceeded));
  EXPECT_TRUE(JobInState(held, warden::JobState::kAvailable));
  EXPECT_NE(r.err.find("1 job on queue mail"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(paused: mail)"), std::string::npos) << r.err;
}

// `jobs why` with real workers: each reason as the store shows it, and
// the reasons go away as their causes do.
TEST_P(OperatorCliTest, JobsWhyNamesWhatHoldsAJobBack) {
  auto codes = [&](int64_t id) {
    CliResult r = Cli({"jobs", "why", std::to_string(id)});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> out;
    for (const Json& reason : r.json["reasons"]) out.push_back(reason.value("code", ""));
    return out;
  };
  using Codes = std::vector<std::string>;
  // No worker at all yet.
  const int64_t lonely = Add(Job("log start"));
  EXPECT_EQ(codes(lonely), Codes{"no_worker_serves"});
  CliResult text = Cli({"jobs", "why", std::to_string(lonely)}, /*json=*/false);
  EXPECT_NE(text.out.find("no_worker_serves: no active worker serves it"), std::string::npos)
      << text.out;

  // A worker with one slot, busy with a keyed job.
  std::vector<std::string> flags = FastFlags();
  StartWorker("w", flags, /*concurrency=*/1);
  EXPECT_TRUE(WaitFor([&] { return JobInState(lonely, warden::JobState::kSucceeded); }));
  const int64_t holder = Add(Job("log start; sleep 30"), {"--concurrency-key", "acct-1"});
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(holder, 1, "start"); }));
  EXPECT_EQ(codes(holder), Codes{"running"});
  const int64_t keyed = Add(Job("log start"), {"--concurrency-key", "acct-1"});
  EXPECT_EQ(codes(keyed), (Codes{"concurrency_key_held", "slots_busy"}));
  CliResult keyed_json = Cli({"jobs", "why", std::to_string(keyed)});
  EXPECT_EQ(keyed_json.json["reasons"][0]["evidence"].value("held_by", int64_t{0}), holder);

  ASSERT_EQ(Cli({"queues", "pause", "default"}).exit_code, 0);
  const int64_t later = Add(Job("log start"), {"--delay", "1h"});
  EXPECT_EQ(codes(later), (Codes{"scheduled", "queue_paused", "slots_busy"}));
  ASSERT_EQ(Cli({"queues", "resume", "default"}).exit_code, 0);
  ASSERT_EQ(Cli({"jobs", "cancel", std::to_string(holder)}).exit_code, 0);
  EXPECT_TRUE(WaitFor([&] { return JobInState(keyed, warden::JobState::kSucceeded); }));
  EXPECT_EQ(codes(keyed), Codes{"finished"});
  EXPECT_EQ(codes(later), Codes{"scheduled"});

  CliResult missing = Cli({"jobs", "why", "999999"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no job with id 999999"), std::string::npos) << missing.err;
}

INSTANTIATE_TEST_SUITE_P(Backends, OperatorCliTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
