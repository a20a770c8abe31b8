// Nodes (warden/nodes.h) on every backend: a disabled or removed node's
// workers claim nothing, and learn it from their heartbeat; a node's
// capacity holds across its workers, claimed jobs included, by one claim
// or by many at once (each on its own connection); a sync keeps the
// operator's disabled flag and leaves removed nodes' rows; nodes the
// registry does not name claim as before.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "store_fixture.h"

namespace warden::testing {
namespace {

class NodeStoreTest : public StoreTest {
 protected:
  static AuditEntry By(const std::string& action) {
    return AuditEntry{0, 0, "cli:test", action, "", 0};
  }
  WorkerId WorkerOnNode(const std::string& name, const std::string& node,
                        Store* store = nullptr) {
    WorkerRegistration r = TestWorker(name);
    r.node = node;
    r.host = "testhost";
    auto id = (store ? store : store_.get())->WorkerRegister(r);
    EXPECT_TRUE(id.has_value()) << id.error().ToString();
    return id.has_value() ? *id : 0;
  }
  void AddJobs(int n) {
    std::vector<JobSpec> specs(n, Spec());
    ASSERT_TRUE(store_->JobInsertMany(specs).has_value());
  }
  void Put(const std::string& node, std::optional<int64_t> capacity) {
    ASSERT_TRUE(store_->NodePut(NodeSpec{node, capacity}, true, By("node.add")).has_value());
  }
  static std::vector<JobInfo> ClaimOn(Store& store, WorkerId w, int limit, int ahead = 0) {
    ClaimParams p;
    p.worker = w;
    p.queues = {"default"};
    p.tasks = {"t"};
    p.limit = limit;
    p.ahead = ahead;
    auto claimed = store.JobClaim(p);
    if (!claimed.has_value()) {
      ADD_FAILURE() << claimed.error().ToString();
      return {};
    }
    return *claimed;
  }
  std::vector<JobInfo> ClaimOn(WorkerId w, int limit, int ahead = 0) {
    return ClaimOn(*store_, w, limit, ahead);
  }
  static void Finish(Store& store, WorkerId w, const JobInfo& job) {
    JobOutcome ok;
    ok.ref = JobRef{job.id, job.lease_token};
    ok.success = true;
    auto done = store.JobFinishMany(w, std::span(&ok, 1));
    ASSERT_TRUE(done.has_value()) << done.error().ToString();
  }
  NodeInfo Node(const std::string& name) {
    const std::vector<NodeInfo> nodes = store_->NodeList().value();
    for (const NodeInfo& n : nodes) {
      if (n.name == name) return n;
    }
    ADD_FAILURE() << "no node " << name;
    return {};
  }
};

TEST_P(NodeStoreTest, AnUnregisteredNodeClaimsAsBefore) {
  AddJobs(3);
  const WorkerId w = WorkerOnNode("w", "a");
  EXPECT_EQ(ClaimOn(w, 10, 2).size(), 3u);
  EXPECT_TRUE(store_->WorkerHeartbeat(w).value().node_takes_work);
  const NodeInfo a = Node("a");
  EXPECT_FALSE(a.registered);
  EXPECT_TRUE(a.TakesWork());
  EXPECT_EQ(a.running, 3);
  EXPECT_EQ(a.live_workers, 1);
}

TEST_P(NodeStoreTest, ADisabledNodeClaimsNothingUntilEnabled) {
  AddJobs(4);
  const WorkerId a = WorkerOnNode("wa", "a");
  const WorkerId b = WorkerOnNode("wb", "b");
  EXPECT_TRUE(store_->NodeSetEnabled("a", false, By("node.disable")).value());
  EXPECT_FALSE(store_->NodeSetEnabled("a", false, By("node.disable")).value()) << "no change";
  EXPECT_TRUE(ClaimOn(a, 10).empty());
  EXPECT_TRUE(ClaimOn(*OpenAnother(), a, 10).empty()) << "another connection too";
  EXPECT_FALSE(store_->WorkerHeartbeat(a).value().node_takes_work);
  EXPECT_TRUE(store_->WorkerHeartbeat(b).value().node_takes_work);
  EXPECT_EQ(ClaimOn(b, 1).size(), 1u) << "other nodes claim";
  EXPECT_TRUE(store_->NodeSetEnabled("a", true, By("node.enable")).value());
  EXPECT_TRUE(store_->WorkerHeartbeat(a).value().node_takes_work);
  EXPECT_EQ(ClaimOn(a, 10).size(), 3u);
  const std::vector<AuditEntry> audit = store_->AuditList(10, 0).value();
  ASSERT_GE(audit.size(), 3u);
  EXPECT_EQ(audit[0].action, "node.enable");
  EXPECT_EQ(audit[0].count, 1);
  EXPECT_EQ(audit[1].count, 0) << "the second disable changed nothing";
}

// Claimed jobs count from their claim: with a capacity, none is claimed
// ahead (it would hold a place another worker of the node could use).
TEST_P(NodeStoreTest, ACapacityHoldsAcrossTheNodesWorkers) {
  AddJobs(20);
  Put("a", 3);
  const WorkerId one = WorkerOnNode("one", "a");
  const WorkerId two = WorkerOnNode("two", "a");
  const WorkerId elsewhere = WorkerOnNode("three", "b");
  auto first = ClaimOn(one, 2, /*ahead=*/1);
  EXPECT_EQ(first.size(), 1u) << "one free slot, one ahead: only the free slot's job";
  auto second = ClaimOn(two, 10);
  EXPECT_EQ(second.size(), 2u) << "three in all on node a";
  EXPECT_TRUE(ClaimOn(one, 10).empty());
  EXPECT_TRUE(ClaimOn(*OpenAnother(), two, 10).empty()) << "another connection too";
  EXPECT_EQ(ClaimOn(elsewhere, 5).size(), 5u) << "node b has no capacity";
  EXPECT_EQ(Node("a").running, 3);
  Finish(*store_, two, second[0]);
  EXPECT_EQ(ClaimOn(one, 10).size(), 1u) << "a finished job frees one place";
  Put("a", 5);
  EXPECT_EQ(ClaimOn(two, 10).size(), 2u) << "a raised capacity";
  Put("a", 4);
  EXPECT_EQ(Node("a").running, 5) << "a lowered capacity stops nothing";
  EXPECT_TRUE(ClaimOn(one, 10).empty()) << "nor lets a claim in above it";
  Put("a", std::nullopt);
  EXPECT_EQ(ClaimOn(two, 2, /*ahead=*/1).size(), 2u) << "no capacity: claims ahead as before";
}

// Many claimers of one node at once, each on its own connection (as the
// node's worker processes are): the jobs they hold never exceed its
// capacity. Each counts the jobs it holds from its claim's commit to
// before its finish is sent: never more than the store holds.
TEST_P(NodeStoreTest, ConcurrentClaimersOfANodeNeverExceedItsCapacity) {
  constexpr int kCapacity = 3, kClaimers = 5, kJobs = 60;
  Put("a", kCapacity);
  AddJobs(kJobs);
  std::atomic<int> held{0}, most{0}, done{0};
  std::vector<std::thread> claimers;
  for (int i = 0; i < kClaimers; ++i) {
    claimers.emplace_back([&, i] {
      std::unique_ptr<Store> store = OpenAnother();
      if (!store) return;
      std::string name(1, 'c');  // (appended: "c" + text is a false -Wrestrict in g++ 12)
      name += std::to_string(i);
      const WorkerId w = WorkerOnNode(name, "a", store.get());
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (done.load() < kJobs && std::chrono::steady_clock::now() < deadline) {
        auto jobs = ClaimOn(*store, w, 2);
        const int now_held = held += static_cast<int>(jobs.size());
        int seen = most.load();
        while (now_held > seen && !most.compare_exchange_weak(seen, now_held)) {
        }
        if (jobs.empty()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          continue;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        for (const JobInfo& j : jobs) {
          --held;
          Finish(*store, w, j);
          ++done;
        }
      }
    });
  }
  for (std::thread& t : claimers) t.join();
  EXPECT_EQ(done.load(), kJobs);
  EXPECT_LE(most.load(), kCapacity);
  EXPECT_EQ(most.load(), kCapacity) << "the capacity was reached, not only respected";
}

TEST_P(NodeStoreTest, SyncKeepsDisabledAndRemovesWhatTheInventoryLacks) {
  AddJobs(4);
  Put("old", std::nullopt);
  Put("gone", 2);
  ASSERT_TRUE(store_->NodeSetEnabled("old", false, By("node.disable")).value());
  const WorkerId on_gone = WorkerOnNode("g", "gone");
  ASSERT_EQ(ClaimOn(on_gone, 1).size(), 1u);

  const std::vector<NodeSpec> inventory = {{"old", 4}, {"new", std::nullopt}};
  const NodeSyncReport dry = store_->NodeSync(inventory, true, By("node.sync")).value();
  EXPECT_EQ(dry.added, std::vector<std::string>{"new"});
  EXPECT_EQ(dry.removed, std::vector<std::string>{"gone"});
  EXPECT_EQ(dry.resized, std::vector<std::string>{"old"});
  EXPECT_EQ(dry.disabled, std::vector<std::string>{"old"});
  EXPECT_TRUE(Node("gone").present) << "a dry run changes nothing";
  EXPECT_EQ(store_->NodeList().value().size(), 2u);

  const NodeSyncReport r = store_->NodeSync(inventory, false, By("node.sync")).value();
  EXPECT_EQ(r.added, dry.added);
  EXPECT_EQ(r.removed, dry.removed);
  const NodeInfo old = Node("old");
  EXPECT_FALSE(old.enabled) << "the operator's flag survives the sync";
  EXPECT_EQ(old.capacity, 4);
  const NodeInfo gone = Node("gone");
  EXPECT_FALSE(gone.present);
  EXPECT_TRUE(gone.removed_at.has_value());
  EXPECT_EQ(gone.running, 1) << "its job is not taken back by the sync";
  EXPECT_TRUE(ClaimOn(on_gone, 10).empty()) << "a removed node gets no more work";
  EXPECT_FALSE(store_->WorkerHeartbeat(on_gone).value().node_takes_work);

  const NodeSyncReport again = store_->NodeSync(inventory, false, By("node.sync")).value();
  EXPECT_FALSE(again.Changed());
  EXPECT_EQ(again.unchanged, 2);

  ASSERT_TRUE(store_->NodeSetEnabled("gone", false, By("node.disable")).value());
  const std::vector<NodeSpec> back = {{"old", 4}, {"new", std::nullopt}, {"gone", 2}};
  const NodeSyncReport revived = store_->NodeSync(back, false, By("node.sync")).value();
  EXPECT_EQ(revived.revived, std::vector<std::string>{"gone"});
  EXPECT_TRUE(Node("gone").present);
  EXPECT_FALSE(Node("gone").enabled) << "disabled while removed: still disabled";
}

TEST_P(NodeStoreTest, RemoveAndAddBack) {
  AddJobs(2);
  EXPECT_EQ(store_->NodeRemove("nowhere", By("node.remove")).error().code(),
            StatusCode::kNotFound);
  Put("a", std::nullopt);
  const WorkerId w = WorkerOnNode("w", "a");
  EXPECT_TRUE(store_->NodeRemove("a", By("node.remove")).value());
  EXPECT_FALSE(store_->NodeRemove("a", By("node.remove")).value()) << "removed already";
  EXPECT_TRUE(ClaimOn(w, 10).empty());
  EXPECT_TRUE(store_->NodePut(NodeSpec{"a", 7}, false, By("node.add")).value());
  const NodeInfo a = Node("a");
  EXPECT_TRUE(a.present);
  EXPECT_FALSE(a.capacity.has_value()) << "a capacity not given is kept";
  EXPECT_FALSE(store_->NodePut(NodeSpec{"a", 7}, false, By("node.add")).value());
  EXPECT_EQ(ClaimOn(w, 10).size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, NodeStoreTest, ::testing::ValuesIn(AllBackends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace warden::testing
