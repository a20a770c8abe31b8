// A silent worker as every surface shows it (warden/worker_silence.h): the
// rule on an injected `now`, and what `jobs why` says of silent workers and
// of workers whose node takes no work or is full (issue 35, §2 and §3).
#include <gtest/gtest.h>

#include "warden/why.h"
#include "warden/worker_silence.h"

namespace warden {
namespace {

constexpr TimeMs kNow = 1'800'000'000'000;

WorkerInfo Live(const std::string& name, TimeMs last_heartbeat, Millis keepalive,
                WorkerState state = WorkerState::kActive) {
  WorkerInfo w;
  w.id = static_cast<WorkerId>(name.size());
  w.name = name;
  w.node = "vm";
  w.queues = {"t"};
  w.tasks = {"send"};
  w.concurrency = 4;
  w.state = state;
  w.last_heartbeat = last_heartbeat;
  w.keepalive = keepalive;
  return w;
}

TEST(WorkerSilence, SilentOnlyPastItsKeepalive) {
  EXPECT_FALSE(WorkerSilentFor(kNow - 10'000, Millis(10'000), kNow));
  EXPECT_EQ(WorkerSilentFor(kNow - 10'001, Millis(10'000), kNow), Millis(10'001));
  EXPECT_EQ(WorkerSilentFor(kNow - 51'000, Millis(10'000), kNow), Millis(51'000));
  // A heartbeat stamped after `now` was read (or a clock step back) is not
  // silence.
  EXPECT_FALSE(WorkerSilentFor(kNow + 5'000, Millis(1'000), kNow));
}

TEST(WorkerSilence, MarksOnlyLiveRowsAndSaysHowLongAndItsKeepalive) {
  std::vector<WorkerInfo> ws = {Live("fresh", kNow - 500, Millis(1'000)),
                                Live("quiet", kNow - 51'000, Millis(10'000)),
                                Live("leaving", kNow - 5'000, Millis(1'000),
                                     WorkerState::kDraining),
                                Live("gone", kNow - 99'000, Millis(1'000), WorkerState::kDead)};
  MarkSilentWorkers(ws, kNow);
  EXPECT_FALSE(ws[0].silent_for);
  EXPECT_EQ(ws[1].silent_for, Millis(51'000));
  EXPECT_EQ(SilenceText(ws[1]), "no heartbeat for 51s, keepalive 10s");
  EXPECT_EQ(ws[2].silent_for, Millis(5'000));
  EXPECT_FALSE(ws[3].silent_for) << "a dead row is dead, not silent";
  EXPECT_EQ(SilenceText(ws[0]), "");
  EXPECT_FALSE(ws[1].Claiming());
  EXPECT_TRUE(ws[0].Claiming());
}

WhyFacts Waiting(std::vector<WorkerInfo> workers) {
  WhyFacts f;
  f.now = kNow;
  f.job.id = 7;
  f.job.queue = "t";
  f.job.task = "send";
  f.job.state = JobState::kAvailable;
  f.job.run_at = kNow - 1000;
  f.live_workers = std::move(workers);
  MarkSilentWorkers(f.live_workers, kNow);
  return f;
}

std::vector<std::string> Codes(const std::vector<WhyReason>& reasons) {
  std::vector<std::string> codes;
  for (const WhyReason& r : reasons) codes.push_back(r.code);
  return codes;
}

TEST(WhyNotRunning, ARunningJobsSilentWorkerIsNamedWithItsSilence) {
  WhyFacts f = Waiting({Live("w7", kNow - 51'000, Millis(10'000))});
  f.job.state = JobState::kRunning;
  f.job.worker = f.live_workers[0].id;
  f.job.worker_name = "w7";
  const auto reasons = WhyNotRunning(f);
  ASSERT_EQ(Codes(reasons), (std::vector<std::string>{"running", "worker_silent"}));
  EXPECT_NE(reasons[1].message.find("w7 is silent: no heartbeat for 51s, keepalive 10s"),
            std::string::npos)
      << reasons[1].message;
  EXPECT_EQ(reasons[1].evidence.value("silent_for_ms", 0), 51'000);
  f.live_workers[0].last_heartbeat = kNow - 100;
  MarkSilentWorkers(f.live_workers, kNow);
  EXPECT_EQ(Codes(WhyNotRunning(f)), std::vector<std::string>{"running"});
}

TEST(WhyNotRunning, OnlySilentWorkersServingItAreNotFreeSlots) {
  const auto reasons = WhyNotRunning(Waiting({Live("w7", kNow - 51'000, Millis(10'000))}));
  ASSERT_EQ(Codes(reasons), std::vector<std::string>{"only_silent_workers"});
  EXPECT_NE(reasons[0].message.find("w7 (no heartbeat for 51s, keepalive 10s)"),
            std::string::npos)
      << reasons[0].message;
}

TEST(WhyNotRunning, WorkersOnlyOnADisabledNodeNameTheFix) {
  WhyFacts f = Waiting({Live("a", kNow, Millis(1'000))});
  f.live_workers[0].node_disabled = true;
  NodeInfo vm;
  vm.name = "vm";
  vm.enabled = false;
  f.nodes = {vm};
  auto reasons = WhyNotRunning(f);
  ASSERT_EQ(Codes(reasons), std::vector<std::string>{"node_disabled"});
  EXPECT_EQ(reasons[0].message, "no worker on an enabled node serves it; warden nodes enable vm");
  f.nodes[0].present = false;  // removed: enabling is not enough
  reasons = WhyNotRunning(f);
  EXPECT_EQ(reasons[0].message, "no worker on an enabled node serves it; warden nodes add vm");
}

TEST(WhyNotRunning, AFullNodeHoldsItBackAndSaysHowFull) {
  WhyFacts f = Waiting({Live("a", kNow, Millis(1'000))});
  f.live_workers[0].running = 2;  // 2 of its 4 slots free
  NodeInfo vm;
  vm.name = "vm";
  vm.capacity = 4;
  vm.running = 4;
  f.nodes = {vm};
  auto reasons = WhyNotRunning(f);
  ASSERT_EQ(Codes(reasons), std::vector<std::string>{"node_capacity_full"});
  EXPECT_EQ(reasons[0].message.rfind("node vm runs 4 of its capacity 4", 0), 0u)
      << reasons[0].message;
  // Room on the node: claimable, its free slots bounded by the room.
  f.nodes[0].running = 3;
  reasons = WhyNotRunning(f);
  ASSERT_EQ(Codes(reasons), std::vector<std::string>{"claimable"});
  EXPECT_EQ(reasons[0].evidence.value("free_slots", 0), 1);
  // A worker elsewhere with a free slot: claimable again.
  f.nodes[0].running = 4;
  WorkerInfo b = Live("b", kNow, Millis(1'000));
  b.id = 99;
  b.node = "other";
  f.live_workers.push_back(b);
  EXPECT_EQ(Codes(WhyNotRunning(f)), std::vector<std::string>{"claimable"});
}

}  // namespace
}  // namespace warden
