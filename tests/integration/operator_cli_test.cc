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
  const int64_t held = Add(Job("log start"), {"--queue", "mail"});
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

INSTANTIATE_TEST_SUITE_P(Backends, OperatorCliTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
