// Frozen workers and keyed jobs: a SIGSTOPped worker's job completes
// elsewhere and its late writes are fenced off; a lost job frees its
// concurrency key, and runs of one key never overlap.
#include <signal.h>

#include <algorithm>
#include <iostream>

#include "harness.h"
#include "status_matchers.h"
#include "store/store.h"

namespace wt {
namespace {

using warden::JobState;
using warden::testing::IsOk;

class FencingTest : public IntegrationTest {};

TEST_P(FencingTest, FrozenWorkersLateCompletionIsFencedOff) {
  Worker& a = StartWorker("a");
  Worker& b = StartWorker("b");
  // Attempt 1 runs until stopped (exiting non-zero on its own terms if it
  // is given the time); later attempts report which attempt produced the
  // result.
  const int64_t id = Add(Job(
      "log start $$; "
      "if [ \"$WARDEN_ATTEMPT\" = 1 ]; then trap 'log term; exit 143' TERM; sleep 30 & wait; fi; "
      "echo \"result {\\\"attempt\\\":$WARDEN_ATTEMPT}\" >&3; log done"));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); }));
  const ProcId stale_run = ProcOf(LedgerFor(id, "start").at(0));
  ASSERT_FALSE(Gone(stale_run));
  Worker* frozen = WorkerByPid(HolderPid(id));
  ASSERT_NE(frozen, nullptr);
  Worker* other = frozen == &a ? &b : &a;

  const SteadyTime stopped = std::chrono::steady_clock::now();
  ASSERT_TRUE(FreezeBetweenTransactions(*frozen));
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); }))
      << "no one took over the frozen worker's job";
  const int64_t takeover_ms = MillisSince(stopped);
  std::cout << "[ measure  ] frozen worker's job completed elsewhere " << takeover_ms
            << " ms after SIGSTOP (lease 1 s)\n";
  EXPECT_LT(takeover_ms, 5000);
  EXPECT_FALSE(LedgerHas(id, 1, "term")) << "the frozen worker cannot have acted";

  const SteadyTime resumed = std::chrono::steady_clock::now();
  ASSERT_TRUE(frozen->proc->Signal(SIGCONT));
  // On waking it stops the stale run at once (a fenced run gets no grace:
  // its trap may not even run), and its report is refused.
  ASSERT_TRUE(WaitFor([&] { return Gone(stale_run); }));
  std::cout << "[ measure  ] stale run stopped " << MillisSince(resumed) << " ms after SIGCONT\n";
  ASSERT_TRUE(WaitFor([&] {
    auto s = client().GetStats();
    return s && s->fenced_writes >= 1;
  }));
  // Self-fenced (watchdog), taken (heartbeat reply) or declared dead: each
  // stops the run, whichever notices first.
  EXPECT_TRUE(frozen->LogHas("stopping job") || frozen->LogHas("was taken from this worker") ||
              frozen->LogHas("stopping its jobs"))
      << frozen->Log();

  const Json job = Show(id);
  EXPECT_EQ(job["state"], "succeeded");
  EXPECT_EQ(job["result"], (Json{{"attempt", 2}}));
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["outcome"], "lost");
  EXPECT_EQ(job["attempts"][1]["outcome"], "succeeded");
  EXPECT_EQ(LedgerFor(id, "done").size(), 1u);
  EXPECT_EQ(LedgerFor(id, "done").at(0).attempt, 2);
  EXPECT_GE(Stats()["recovery"]["fenced_writes"].get<int64_t>(), 1);

  // The timeline: attempt 1's lease ran out (a frozen process is not
  // provably dead), and its late write is there under attempt 1's lease.
  const Json t = Timeline(id);
  ASSERT_EQ(t["attempts"].size(), 2u) << t.dump(2);
  EXPECT_EQ(t["attempts"][0]["lost_by"], "lease_expiry") << t.dump(2);
  ASSERT_GE(t["fenced_writes"].size(), 1u) << t.dump(2);
  EXPECT_EQ(t["fenced_writes"][0]["lease_token"], t["attempts"][0]["lease_token"]);
  // By the same process: under the id it holds when it writes, which is a
  // new incarnation's if it registered again after being presumed dead.
  EXPECT_EQ(t["fenced_writes"][0]["worker_name"], t["attempts"][0]["worker_name"]);
  bool late_shown = false;
  for (const Json& e : t["events"]) {
    late_shown = late_shown || (e["kind"] == "fenced_write" && e["attempt"] == 1);
  }
  EXPECT_TRUE(late_shown) << t.dump(2);

  // Both workers live on, and the frozen one is a live worker again: under
  // its old id if it heartbeated before the sweeper presumed it dead, else
  // registered afresh.
  EXPECT_FALSE(frozen->proc->Exited());
  EXPECT_FALSE(other->proc->Exited());
  ASSERT_TRUE(WaitFor([&] {
    for (const Json& w : Workers()) {
      if (w["pid"] == frozen->pid() && w["state"] == "active") return true;
    }
    return false;
  })) << frozen->Log();
  const int64_t after = Add(Job("log after"));
  ASSERT_TRUE(WaitFor([&] { return JobInState(after, JobState::kSucceeded); }));
}

TEST_P(FencingTest, AFinishedRunWhoseOutcomeIsRefusedIsNotLoggedAsSucceeded) {
  // Attempt 1's command ends while its worker is frozen (the command runs
  // under its own supervisor, which is not); attempt 2 runs elsewhere.
  // Thawed, the worker reports attempt 1's success, and the store refuses
  // it: the log must say so, not "succeeded".
  StartWorker("a");
  StartWorker("b");
  const int64_t id =
      Add(Job("log start; if [ \"$WARDEN_ATTEMPT\" = 1 ]; then sleep 2; fi; log done"));
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); }));
  Worker* frozen = WorkerByPid(HolderPid(id));
  ASSERT_NE(frozen, nullptr);
  ASSERT_TRUE(FreezeBetweenTransactions(*frozen));
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); }));
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "done"); }))
      << "attempt 1's command never finished";
  ASSERT_TRUE(frozen->proc->Signal(SIGCONT));
  ASSERT_TRUE(WaitFor([&] {
    auto s = client().GetStats();
    return s && s->fenced_writes >= 1;
  }));
  const std::string label = "job " + std::to_string(id) + " (command) attempt 1";
  // Whichever way it learns of the loss (a refused completion, or its
  // watchdog or heartbeat first), attempt 1 never reads as a success.
  EXPECT_FALSE(frozen->LogHas(label + ": succeeded in")) << frozen->Log();
  bool completion_refused = false;
  const Json timeline = Timeline(id);
  for (const Json& f : timeline["fenced_writes"]) {
    completion_refused = completion_refused || f["what"] == "complete";
  }
  if (completion_refused) {
    EXPECT_TRUE(WaitFor([&] {
      return frozen->LogHas(label + ": finished in ") &&
             frozen->LogHas("its outcome was refused (fenced off)");
    })) << frozen->Log();
  }
}

TEST_P(FencingTest, LostJobFreesItsConcurrencyKeyAndRunsNeverOverlap) {
  Worker& a = StartWorker("a");
  Worker& b = StartWorker("b");
  // The first run of any job holds the key until its worker dies. Every run
  // checks that no other run of the key is alive when it starts.
  const std::string keyed =
      Job("P=\"$L.key.pid\"; if [ -f \"$P\" ] && kill -0 \"$(cat \"$P\")\" 2>/dev/null; then "
          "log OVERLAP \"$(cat \"$P\")\"; fi; echo $$ > \"$P\"; "
          "log start $(date +%s%N); "
          "if mkdir \"$L.hang\" 2>/dev/null; then log hang $$; sleep 30; else sleep 0.2; fi; "
          "log end $(date +%s%N)");
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(Add(keyed, {"--concurrency-key", "K"}));
  ASSERT_GT(ids.back(), 0);
  ASSERT_TRUE(WaitFor([&] { return Ledger().size() >= 2; }));  // start + hang
  const auto hang = [&] {
    for (const auto& l : Ledger()) {
      if (l.event == "hang") return l;
    }
    return LedgerLine{};
  }();
  ASSERT_GT(hang.job, 0);
  // While it hangs the other keyed jobs wait, though both workers are idle
  // enough to run an unkeyed job.
  const int64_t free_job = Add(Job("log free"));
  ASSERT_TRUE(WaitFor([&] { return JobInState(free_job, JobState::kSucceeded); }));
  int keyed_starts = 0;
  for (int64_t id : ids) keyed_starts += static_cast<int>(LedgerFor(id, "start").size());
  EXPECT_EQ(keyed_starts, 1);

  Worker* victim = WorkerByPid(HolderPid(hang.job));
  ASSERT_NE(victim, nullptr);
  Worker* survivor = victim == &a ? &b : &a;
  const ProcId hung = ProcOf(hang);
  ASSERT_FALSE(Gone(hung));
  const SteadyTime killed = std::chrono::steady_clock::now();
  victim->proc->Kill();
  ASSERT_TRUE(WaitFor([&] {
    int starts = 0;
    for (int64_t id : ids) starts += static_cast<int>(LedgerFor(id, "start").size());
    return starts >= 2;
  }));
  const int64_t freed_ms = MillisSince(killed);
  std::cout << "[ measure  ] next run of the key started " << freed_ms
            << " ms after its holder was SIGKILLed\n";
  EXPECT_LT(freed_ms, 5000);
  EXPECT_TRUE(WaitFor([&] { return Gone(hung); }, Millis(5000)));

  ASSERT_TRUE(WaitFor([&] {
    return std::all_of(ids.begin(), ids.end(),
                       [&](int64_t id) { return JobInState(id, JobState::kSucceeded); });
  }));
  EXPECT_FALSE(survivor->proc->Exited());

  // Completed runs of the key, by start time, never overlap; the killed run
  // was dead before the next began (no OVERLAP line).
  struct Run {
    int64_t start, end;
  };
  std::vector<Run> runs;
  for (const auto& l : Ledger()) {
    EXPECT_NE(l.event, "OVERLAP") << "job " << l.job << " attempt " << l.attempt;
    if (l.event != "end") continue;
    int64_t start = -1;
    for (const auto& s : LedgerFor(l.job, "start")) {
      if (s.attempt == l.attempt) start = std::stoll(s.args.at(0));
    }
    runs.push_back({start, std::stoll(l.args.at(0))});
  }
  ASSERT_EQ(runs.size(), 3u);
  std::sort(runs.begin(), runs.end(), [](const Run& x, const Run& y) { return x.start < y.start; });
  for (size_t i = 1; i < runs.size(); ++i) {
    EXPECT_LE(runs[i - 1].end, runs[i].start) << "runs " << i - 1 << " and " << i << " overlap";
  }
  const Json lost = Show(hang.job);
  ASSERT_EQ(lost["attempts"].size(), 2u) << lost.dump(2);
  EXPECT_EQ(lost["attempts"][0]["outcome"], "lost");
  EXPECT_EQ(lost["concurrency_key"], "K");
}

// A claim can commit and still fail in the worker (PostgreSQL: the
// connection dies after COMMIT). The store then says the worker holds jobs
// it never heard of, and its heartbeats would extend their leases for as
// long as it lives. Staged here by claiming in the worker's name from
// another connection, for a queue the worker does not serve (so it cannot
// simply claim the job back and hide the hand-back).
TEST_P(FencingTest, JobsOfAClaimWhoseReplyWasLostAreHandedBackUnrun) {
  Worker& w = StartWorker("a");
  const int64_t worker = WorkerIdOf(w.pid());
  ASSERT_GT(worker, 0);
  const int64_t id = Add(Job("log ran"), {"--queue", "elsewhere"});
  ASSERT_GT(id, 0);
  auto store = warden::OpenStore(db());
  ASSERT_THAT(store, IsOk());
  warden::ClaimParams params;
  params.worker = worker;
  params.queues = {"elsewhere"};
  params.allow_commands = true;
  params.default_lease = Millis(1000);
  auto claimed = (*store)->JobClaim(params);
  ASSERT_THAT(claimed, IsOk());
  ASSERT_EQ(claimed->size(), 1u);
  // Well past the 1 s lease: without the hand-back the job stays `running`.
  ASSERT_TRUE(WaitFor([&] { return !JobInState(id, JobState::kRunning); }))
      << "the worker keeps a job it does not know it holds\n"
      << w.Log();
  EXPECT_TRUE(w.LogHas("its claim's reply never came")) << w.Log();
  const Json job = Show(id);
  ASSERT_GE(job["attempts"].size(), 1u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["outcome"], "lost");
  EXPECT_FALSE(LedgerHas(id, 1, "ran")) << "handed back unrun";
  EXPECT_FALSE(w.proc->Exited());
}

INSTANTIATE_TEST_SUITE_P(Backends, FencingTest, ::testing::ValuesIn(AllBackends()), BackendName);

}  // namespace
}  // namespace wt
