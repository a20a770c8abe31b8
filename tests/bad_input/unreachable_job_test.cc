// Rows "unknown task", "queue named with a comma" and "keepalive below the
// heartbeat" of docs/bad-input.md: a job no worker can run yet is never lost
// (it waits, available, for a worker that can run it), though nothing warns
// about it (a gap the table records); names no worker could ever serve are
// refused up front, and so is a keepalive threshold under three heartbeats.
#include <iostream>

#include "bad_input.h"

namespace bi {
namespace {

using warden::JobState;

class UnreachableJobTest : public BadInputTest {
 protected:
  int64_t AddJson(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"--json"};
    all.insert(all.end(), args.begin(), args.end());
    CliResult r = Warden(db(), all);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.json.is_object() ? r.json.value("id", int64_t{-1}) : -1;
  }
};

TEST_P(UnreachableJobTest, JobForATaskNoWorkerHandlesWaitsAvailableUntilOneDoes) {
  // The harness starts workers with --allow-cmd; a job of task `unknown`
  // (no command) is still not theirs.
  auto flags = FastFlags();
  flags.insert(flags.end(), {"--task", "known=" + Job("log known")});
  wt::Worker& a = StartWorker("a", flags);
  const int64_t unknown = AddJson({"add", "unknown", R"({"x": 1})"});
  const int64_t known = AddJson({"add", "known"});
  ASSERT_GT(unknown, 0);
  ASSERT_TRUE(wt::WaitFor([&] { return JobInState(known, JobState::kSucceeded); }));
  // Two more jobs through the same worker: it has claimed several times
  // since `unknown` was enqueued.
  for (int i = 0; i < 2; ++i) {
    const int64_t more = AddJson({"add", "known"});
    ASSERT_TRUE(wt::WaitFor([&] { return JobInState(more, JobState::kSucceeded); }));
  }
  auto job = GetJob(unknown);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, JobState::kAvailable);
  EXPECT_EQ(job->attempt, 0);
  EXPECT_TRUE(job->attempts.empty());
  const bool warned = a.LogHas("unknown") || a.LogHas(std::to_string(unknown) + " ");
  std::cout << "[ bad-input] worker log mentions the unhandled job: " << (warned ? "yes" : "no")
            << (warned ? "" : " (gap: it is skipped silently)") << "\n";
  // `wait` does not hang on it: it times out with one line.
  CliResult w = Warden(db(), {"wait", "--timeout", "300ms"});
  EXPECT_EQ(w.exit_code, 1);
  EXPECT_TRUE(OneLineError(w));
  EXPECT_EQ(Stats()["jobs"]["available"], 1);

  // A worker that handles it runs it, with its payload.
  auto b_flags = FastFlags();
  b_flags.insert(b_flags.end(), {"--task", "unknown=" + Job("log ran $(cat)")});
  StartWorker("b", b_flags);
  ASSERT_TRUE(wt::WaitFor([&] { return JobInState(unknown, JobState::kSucceeded); }));
  const auto ran = LedgerFor(unknown, "ran");
  ASSERT_EQ(ran.size(), 1u);
  EXPECT_EQ(ran[0].args, std::vector<std::string>({"{\"x\":1}"}));
}

TEST_P(UnreachableJobTest, QueueNamedWithACommaIsRefused) {
  // `warden worker --queues a,b` listens on `a` and `b`: no worker started
  // from the command line could name the queue `a,b`, so such a job would
  // wait forever. It used to be accepted; now `add` refuses it (exit 2),
  // and so does the API, whose jobs the same workers serve.
  CliResult r = Warden(db(), {"--json", "add", "t", "--queue", "a,b"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(OneLineError(r, "queue must not contain ','"));
  warden::JobSpec spec;
  spec.task = "t";
  spec.queue = "a,b";
  auto refused = client().Enqueue(spec);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), warden::StatusCode::kInvalidArgument);
  EXPECT_EQ(Stats()["jobs"].value("available", 0), 0) << "nothing stored";
  // Likewise a task no `--task NAME=COMMAND` could name.
  r = Warden(db(), {"add", "resize=fast"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(OneLineError(r, "task must not contain '='"));
  // The list itself still works: a worker on `a,b` serves `a` and `b`.
  auto flags = FastFlags({{"--queues", "a,b"}, {"--poll-interval", "100ms"}});
  flags.insert(flags.end(), {"--task", "t=" + Job("log ran")});
  StartWorker("ab", flags);
  const int64_t on_a = AddJson({"add", "t", "--queue", "a"});
  const int64_t on_b = AddJson({"add", "t", "--queue", "b"});
  ASSERT_TRUE(wt::WaitFor([&] { return JobInState(on_a, JobState::kSucceeded); }));
  ASSERT_TRUE(wt::WaitFor([&] { return JobInState(on_b, JobState::kSucceeded); }));
}

TEST_P(UnreachableJobTest, KeepaliveBelowTheHeartbeatLosesNothing) {
  const int64_t id = AddJson({"add", "--cmd", Job("log ran")});
  ASSERT_GT(id, 0);
  // A worker that presumes every worker dead at once, itself included.
  std::vector<std::string> argv = {WARDEN_BIN, "--db", db(), "worker", "--allow-cmd",
                                   "--keepalive-threshold", "0s", "--sweep-interval", "100ms"};
  auto w = wt::Child::Spawn(argv, dir() + "/flapper.out", dir() + "/flapper.log");
  // Refused up front (it was accepted, and the worker declared every worker
  // dead, itself included, at each sweep).
  ASSERT_TRUE(w->WaitExit(Millis(10'000))) << "--keepalive-threshold 0s was accepted";
  EXPECT_EQ(w->ExitCode(), 2) << w->Stderr();
  EXPECT_NE(w->Stderr().find("the keepalive threshold (0ms) must be at least three heartbeat"),
            std::string::npos)
      << w->Stderr();
  // The job is still there for a sane one.
  StartWorker("sane");
  ASSERT_TRUE(wt::WaitFor([&] { return JobInState(id, JobState::kSucceeded); }));
  EXPECT_GE(LedgerFor(id, "ran").size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends, UnreachableJobTest, ::testing::ValuesIn(wt::AllBackends()),
                         wt::BackendName);

}  // namespace
}  // namespace bi
