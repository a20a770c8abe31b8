// Nodes with real worker processes (issue 22), each worker given its node
// with --node: a disabled node's worker drains (its jobs run on for
// --shutdown-timeout, then are released) and claims again once enabled; a
// node's capacity holds across its workers, judged from what the jobs
// themselves log; a node removed by a sync gets no more work while its
// live worker keeps its job, until `nodes remove --force` releases it. The
// maintenance leader's --inventory-command syncs the registry.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include "harness.h"

namespace wt {
namespace {

class NodesTest : public IntegrationTest {
 protected:
  Worker& OnNode(const std::string& name, const std::string& node, int slots,
                 const std::string& shutdown_timeout = "30s") {
    return StartWorker(name,
                       FastFlags({{"--node", node},
                                  {"--shutdown-timeout", shutdown_timeout},
                                  {"--poll-interval", "50ms"}}),
                       slots);
  }
  bool HeldBy(int64_t id, const Worker& w) { return HolderPid(id) == w.pid(); }
  // A job whose first attempt waits for the file `go`, then kills its
  // worker (the job's parent is the supervisor shim, whose parent is the
  // worker); later attempts log `ran`.
  std::string KillsItsFirstWorkerOnce(const std::string& go) {
    return Job("if [ \"$WARDEN_ATTEMPT\" = 1 ]; then while [ ! -e " + go +
               " ]; do sleep 0.05; done; W=$(cut -d' ' -f4 /proc/$PPID/stat); kill -9 $W; "
               "sleep 30; fi; log ran");
  }
  // Written whole (a rename), as an --inventory-command may read it at any time.
  std::string Inventory(const std::string& text) {
    const std::string path = dir() + "/inventory";
    std::ofstream(path + ".new") << text;
    std::rename((path + ".new").c_str(), path.c_str());
    return path;
  }
};

TEST_P(NodesTest, ADisabledNodeDrainsThenClaimsAgainOnceEnabled) {
  Worker& a = OnNode("a", "n1", 2, "1s");
  const int64_t one = Add(Job("log start; sleep 60"));
  const int64_t two = Add(Job("log start; sleep 60"));
  ASSERT_TRUE(WaitFor([&] { return HeldBy(one, a) && HeldBy(two, a); }, Millis(20'000)));

  CliResult off = Cli({"nodes", "disable", "n1"});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_TRUE(off.json.value("changed", false));
  ASSERT_TRUE(WaitFor([&] { return a.LogHas("node n1 takes no work"); }, Millis(10'000)))
      << a.Log();
  // --shutdown-timeout later, the jobs still running are released: back to
  // available, and a claims neither again.
  ASSERT_TRUE(WaitFor([&] {
    return JobInState(one, warden::JobState::kAvailable) &&
           JobInState(two, warden::JobState::kAvailable);
  }, Millis(20'000))) << a.Log();
  const Json first = Show(one)["attempts"][0];
  EXPECT_EQ(first.value("outcome", ""), "released") << first.dump();
  // Shown after its kind ("released: its node..."), it does not repeat it.
  EXPECT_EQ(first["error"].value("message", "").rfind("its node takes no more work", 0), 0)
      << first.dump();
  EXPECT_TRUE(StaysTrueFor([&] { return JobInState(one, warden::JobState::kAvailable); },
                           Millis(1500)))
      << "a disabled node claims nothing";

  CliResult ls = Cli({"nodes", "ls"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  ASSERT_EQ(ls.json.size(), 1u) << ls.out;
  EXPECT_EQ(ls.json[0].value("name", ""), "n1");
  EXPECT_FALSE(ls.json[0].value("enabled", true));
  EXPECT_EQ(ls.json[0].value("live_workers", 0), 1);

  // Another node takes them; once n1 is enabled, a runs the next job.
  Worker& b = OnNode("b", "n2", 2);
  ASSERT_TRUE(WaitFor([&] { return HeldBy(one, b) && HeldBy(two, b); }, Millis(20'000)));
  CliResult on = Cli({"nodes", "enable", "n1"});
  ASSERT_EQ(on.exit_code, 0) << on.err;
  ASSERT_TRUE(WaitFor([&] { return a.LogHas("node n1 takes work again"); }, Millis(10'000)));
  const int64_t next = Add(Job("log ran"));
  ASSERT_TRUE(WaitFor([&] { return JobInState(next, warden::JobState::kSucceeded); },
                      Millis(20'000)))
      << a.Log();
  EXPECT_EQ(Show(next)["attempts"][0].value("worker_name", ""), "a") << "b's slots are full";
}

// Two workers of three slots on a node of capacity 2: the jobs' own log
// never shows more than two running at once, and does show two.
TEST_P(NodesTest, ACapacityHoldsAcrossTheNodesWorkers) {
  CliResult add = Cli({"nodes", "add", "n1", "--capacity", "2"});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  OnNode("a", "n1", 3);
  OnNode("b", "n1", 3);
  // All at once (one `warden add` each is slower than a job under ASan):
  // the two workers' six slots then want more than the node allows.
  std::vector<warden::JobSpec> specs(10);
  for (warden::JobSpec& s : specs) {
    s.task = std::string("command");
    s.command = Job("log start $(date +%s%N); sleep 0.3; log end $(date +%s%N)");
  }
  const std::vector<int64_t> ids = EnqueueMany(specs);
  ASSERT_TRUE(WaitFor([&] {
    return std::all_of(ids.begin(), ids.end(), [&](int64_t id) {
      return JobInState(id, warden::JobState::kSucceeded);
    });
  }, Millis(60'000)));
  std::map<int64_t, std::pair<int64_t, int64_t>> runs;
  for (const LedgerLine& l : Ledger()) {
    if (l.args.empty()) continue;
    if (l.event == "start") runs[l.job].first = std::stoll(l.args[0]);
    if (l.event == "end") runs[l.job].second = std::stoll(l.args[0]);
  }
  std::vector<std::pair<int64_t, int>> edges;
  for (const auto& [job, run] : runs) {
    edges.emplace_back(run.first, +1);
    edges.emplace_back(run.second, -1);
  }
  ASSERT_EQ(edges.size(), 2 * ids.size());
  std::sort(edges.begin(), edges.end());
  int at_once = 0, most = 0;
  for (const auto& [t, d] : edges) most = std::max(most, at_once += d);
  EXPECT_EQ(most, 2);
}

TEST_P(NodesTest, ASyncedAwayNodeKeepsItsJobUntilForced) {
  Worker& a = OnNode("a", "n1", 1);
  const int64_t id = Add(Job("log start; sleep 60"));
  ASSERT_TRUE(WaitFor([&] { return HeldBy(id, a); }, Millis(20'000)));
  CliResult dry = Cli({"nodes", "sync", "--from", Inventory("n1 4\nn2\n"), "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(dry.json["added"], Json({"n1", "n2"})) << dry.out;
  ASSERT_EQ(Cli({"nodes", "sync", "--from", Inventory("n1 4\nn2\n")}).exit_code, 0);

  CliResult sync = Cli({"nodes", "sync", "--from", Inventory("[\"n2\"]")});
  ASSERT_EQ(sync.exit_code, 0) << sync.err;
  EXPECT_EQ(sync.json["removed"], Json({"n1"})) << sync.out;
  const int64_t later = Add(Job("log ran"));
  // Well past a lease (1 s) and several sweeps: the live worker keeps its
  // job (the inventory may be wrong), and claims nothing more.
  EXPECT_TRUE(StaysTrueFor([&] {
    return HeldBy(id, a) && JobInState(later, warden::JobState::kAvailable);
  }, Millis(2500))) << "a live worker's job is not taken back by a sync, nor a new one claimed";
  EXPECT_TRUE(a.LogHas("node n1 takes no work (disabled or removed): claiming nothing; 1 running "
                       "job may finish within 30s, then is released"))
      << a.Log();

  CliResult forced = Cli({"nodes", "remove", "n1", "--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_FALSE(forced.json.value("changed", true)) << "removed already";
  EXPECT_EQ(forced.json.value("workers_released", 0), 1) << forced.out;
  EXPECT_EQ(forced.json.value("jobs_recovered", 0), 1) << forced.out;
  EXPECT_FALSE(HeldBy(id, a));
  Worker& b = OnNode("b", "n2", 2);
  ASSERT_TRUE(WaitFor([&] {
    return HeldBy(id, b) && JobInState(later, warden::JobState::kSucceeded);
  }, Millis(20'000)));
  const Json lost = Show(id)["attempts"][0];
  EXPECT_EQ(lost.value("lost_by", ""), "operator") << lost.dump();
}

// The registry as `nodes ls` shows it: name -> "present" or "removed",
// with the capacity ("n1:4").
std::map<std::string, std::string> Registry(CliResult ls) {
  std::map<std::string, std::string> out;
  for (const Json& n : ls.json) {
    if (!n.value("registered", false)) continue;
    std::string state = n.value("present", false) ? "present" : "removed";
    if (n["capacity"].is_number()) {
      state += ':';
      state += std::to_string(n["capacity"].get<int64_t>());
    }
    out[n.value("name", "")] = state;
  }
  return out;
}

// The maintenance leader's --inventory-command: its first run as the
// leader, then every --inventory-interval; a failing command, one that
// prints no inventory or an empty one, changes nothing and says why.
TEST_P(NodesTest, TheLeaderSyncsTheRegistryToItsInventoryCommand) {
  const std::string inv = Inventory("n1 4\nn2\n");
  Worker& a = StartWorker("a", FastFlags({{"--node", "n1"},
                                          {"--inventory-command", "cat " + inv},
                                          {"--inventory-interval", "1s"}}));
  using Nodes = std::map<std::string, std::string>;
  auto registry = [&] { return Registry(Cli({"nodes", "ls"})); };
  ASSERT_TRUE(WaitFor(
      [&] {
        return registry() == Nodes{{"n1", "present:4"}, {"n2", "present"}};
      },
      Millis(20'000)))
      << a.Log();
  // The sync commits before its line is written.
  EXPECT_TRUE(WaitFor([&] {
    return a.LogHas("inventory (now the maintenance leader): added n1, n2");
  })) << a.Log();
  CliResult audit = Cli({"audit"});
  ASSERT_EQ(audit.exit_code, 0) << audit.err;
  ASSERT_FALSE(audit.json.empty()) << audit.out;
  EXPECT_EQ(audit.json[0].value("actor", ""), "worker:a") << audit.out;
  EXPECT_EQ(audit.json[0].value("action", ""), "node.sync") << audit.out;

  Inventory("n1 4\n");
  ASSERT_TRUE(WaitFor([&] { return registry() == Nodes{{"n1", "present:4"}, {"n2", "removed"}}; },
                      Millis(20'000)))
      << a.Log();
  EXPECT_TRUE(WaitFor([&] { return a.LogHas("inventory (every 1s): removed n2"); })) << a.Log();

  // Each of these leaves the registry as it is.
  const struct {
    const char* text;  // nullptr: no file, so `cat` fails
    const char* says;
  } bad[] = {{"n1 4\nn3 lots\n", "printed no inventory"},
             {"# nothing\n", "listed no node"},
             {nullptr, "exited with status 1: cat: "}};
  for (const auto& b : bad) {
    if (b.text) {
      Inventory(b.text);
    } else {
      ASSERT_EQ(std::remove(inv.c_str()), 0);
    }
    ASSERT_TRUE(WaitFor([&] { return a.LogHas(b.says); }, Millis(20'000))) << a.Log();
    EXPECT_EQ(registry(), (Nodes{{"n1", "present:4"}, {"n2", "removed"}})) << b.says;
  }
}

// Work that no worker can run, and a worker's death, each ask for the
// inventory at once: the interval (an hour) never comes round here.
TEST_P(NodesTest, UnservedWorkAndADeathAskForTheInventoryAtOnce) {
  const std::string inv = Inventory("n1\n");
  Worker& a = StartWorker("a", FastFlags({{"--node", "n1"},
                                          {"--inventory-command", "cat " + inv},
                                          {"--inventory-interval", "1h"}}));
  auto present = [&](const std::string& node) {
    return Registry(Cli({"nodes", "ls"})).count(node) > 0;
  };
  ASSERT_TRUE(WaitFor([&] { return present("n1"); }, Millis(20'000))) << a.Log();

  Inventory("n1\nn2\n");
  ASSERT_GT(Add(Job("true"), {"--queue", "elsewhere"}), 0);
  ASSERT_TRUE(WaitFor([&] { return present("n2"); }, Millis(20'000))) << a.Log();
  EXPECT_TRUE(a.LogHas("work waits that no worker can run (queue elsewhere, command jobs)"))
      << a.Log();

  Inventory("n1\nn2\nn3\n");
  Worker& b = StartWorker("b", FastFlags({{"--node", "n2"}, {"--queues", "other"}}));
  b.proc->Kill();
  ASSERT_TRUE(WaitFor([&] { return present("n3"); }, Millis(20'000))) << a.Log();
  EXPECT_TRUE(a.LogHas("worker declared dead): added n3")) << a.Log();
}

// A job lost on n1 while a worker on n2 has a free slot runs next on n2,
// though n1's other worker, with two free slots, is woken as soon (without
// the preference, each would win about half the time).
TEST_P(NodesTest, AJobLostOnANodeRunsNextOnAnother) {
  Worker& a1 = OnNode("a1", "n1", 1);
  const std::string go = dir() + "/go";
  const int64_t id = Add(KillsItsFirstWorkerOnce(go));
  ASSERT_TRUE(WaitFor([&] { return HeldBy(id, a1); }, Millis(20'000)));
  Worker& a2 = OnNode("a2", "n1", 2);
  Worker& b = OnNode("b", "n2", 1);
  std::ofstream(go) << "go";
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kSucceeded); },
                      Millis(30'000)))
      << a2.Log() << b.Log();
  const Json job = Show(id);
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0].value("outcome", ""), "lost") << job.dump(2);
  EXPECT_EQ(job["attempts"][1].value("worker_name", ""), "b") << job.dump(2);
  ASSERT_TRUE(job["avoid_node"].is_object()) << job.dump(2);
  EXPECT_EQ(job["avoid_node"].value("node", ""), "n1");
}

// The same loss with no other node serving the queue: n1's other worker
// takes the job at once, kept from nobody.
TEST_P(NodesTest, AJobLostOnTheOnlyNodeThatServesItRunsThereAtOnce) {
  Worker& a1 = OnNode("a1", "n1", 1);
  const std::string go = dir() + "/go";
  const int64_t id = Add(KillsItsFirstWorkerOnce(go));
  ASSERT_TRUE(WaitFor([&] { return HeldBy(id, a1); }, Millis(20'000)));
  Worker& a2 = OnNode("a2", "n1", 1);
  StartWorker("b", FastFlags({{"--node", "n2"}, {"--queues", "other"}}));
  std::ofstream(go) << "go";
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kSucceeded); },
                      Millis(30'000)))
      << a2.Log();
  const Json job = Show(id);
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  EXPECT_EQ(job["attempts"][1].value("worker_name", ""), "a2") << job.dump(2);
  EXPECT_TRUE(job["avoid_node"].is_null()) << job.dump(2);
}

INSTANTIATE_TEST_SUITE_P(Backends, NodesTest, ::testing::ValuesIn(AllBackends()), BackendName);

}  // namespace
}  // namespace wt
