// What only the in-memory store has: databases by name in one process,
// alive while a store is open on them, and safe to open and close from
// many threads at once.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <thread>
#include <vector>

#include "store/memory/memory_session.h"
#include "store/store.h"
#include "store_fixture.h"

namespace warden::testing {
namespace {

std::unique_ptr<Store> Open(const std::string& url, bool create = true) {
  StoreOptions o;
  o.create_if_missing = create;
  auto s = OpenStore(url, o);
  EXPECT_TRUE(s.has_value()) << url << ": " << s.error().ToString();
  return s.has_value() ? std::move(s).value() : nullptr;
}

int64_t Jobs(Store& s) { return s.JobCountUnfinished().value(); }

JobSpec OneJob() {
  JobSpec spec;
  spec.task.push_back('t');  // (= "t": a false -Wrestrict in g++ 12)
  return spec;
}

void AddOne(Store& s) {
  const JobSpec spec = OneJob();
  ASSERT_TRUE(s.JobInsertMany(std::span<const JobSpec>(&spec, 1)).has_value());
}

TEST(MemoryStoreTest, AUrlWithoutANameIsRefused) {
  auto s = OpenStore("memory:");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.error().message().find("names no database"), std::string::npos)
      << s.error().message();
}

TEST(MemoryStoreTest, StoresOnOneNameShareADatabaseThatEndsWithTheLast) {
  auto a = Open("memory:share");
  auto b = Open("memory:share");
  auto other = Open("memory:share-not");
  AddOne(*a);
  EXPECT_EQ(Jobs(*b), 1);
  EXPECT_EQ(Jobs(*other), 0) << "another name, another database";
  a.reset();
  EXPECT_EQ(Jobs(*b), 1) << "alive while a store is open on it";
  b.reset();
  auto again = Open("memory:share");
  EXPECT_EQ(Jobs(*again), 0) << "gone with the last store: a new one starts empty";
}

// A command that only reads must not make a database it could never see
// filled (each CLI command is a process of its own).
TEST(MemoryStoreTest, OpeningOnlyWhatExistsFindsOnlyAnOpenDatabase) {
  StoreOptions o;
  o.create_if_missing = false;
  auto missing = OpenStore("memory:only-existing", o);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  auto made = Open("memory:only-existing");
  AddOne(*made);
  auto found = Open("memory:only-existing", false);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(Jobs(*found), 1);
}

// The worker row is the store's business, not the session's; and a session
// may outlive the stores (a worker closes them in any order).
TEST(MemoryStoreTest, ASessionEndsWithoutTouchingItsWorkerAndMayOutliveTheStore) {
  auto store = Open("memory:session");
  const WorkerId w = store->WorkerRegister(TestWorker()).value();
  auto session = store->OpenSession(w, Millis(10'000));
  ASSERT_TRUE(session.has_value()) << session.error().ToString();
  EXPECT_FALSE((*session)->LossProvesDeath());
  EXPECT_TRUE((*session)->Holds());
  AddOne(*store);
  pollfd fd{(*session)->fd(), POLLIN, 0};
  ASSERT_EQ(poll(&fd, 1, 1000), 1);
  EXPECT_TRUE((*session)->Drain().value());
  EXPECT_FALSE((*session)->Drain().value()) << "drained";
  session->reset();
  EXPECT_EQ(store->WorkerListLive("").value().size(), 1u);

  auto outliving = store->OpenSession(w, Millis(10'000));
  ASSERT_TRUE(outliving.has_value());
  store.reset();
  EXPECT_FALSE((*outliving)->Drain().value());
  outliving->reset();
}

// With StoreOptions::memory_session_proofs (the runtime simulation's
// PostgreSQL shape) a session holds its worker's lock as PostgreSQL's: lost
// when the session closes or the server drops it, which others see as
// session_lost; taken again by Drain, with a new epoch.
TEST(MemoryStoreTest, SessionsWithProofsHoldALockWhoseLossTheOthersSee) {
  StoreOptions o;
  o.memory_session_proofs = true;
  auto store = OpenStore("memory:session-proofs", o).value();
  const WorkerId w = store->WorkerRegister(TestWorker()).value();
  auto live = [&] { return store->WorkerListLive("").value().at(0); };
  EXPECT_FALSE(live().session_lost) << "a lock never taken proves nothing";

  auto opened = store->OpenSession(w, Millis(10'000));
  ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
  auto* session = dynamic_cast<memory::MemorySession*>(opened->get());
  ASSERT_NE(session, nullptr);
  EXPECT_TRUE(session->LossProvesDeath());
  EXPECT_TRUE(session->Holds());
  EXPECT_FALSE(live().session_lost);
  const int64_t epoch = live().session_epoch;

  session->ServerDrops();
  EXPECT_FALSE(session->Holds());
  EXPECT_TRUE(live().session_lost);
  EXPECT_TRUE(session->Drain().value()) << "a new session may have missed wake-ups";
  EXPECT_TRUE(session->Holds());
  EXPECT_FALSE(live().session_lost);
  EXPECT_GT(live().session_epoch, epoch);

  auto second = store->OpenSession(w, Millis(10'000)).value();
  EXPECT_FALSE(second->Holds()) << "the first session still holds the lock";
  opened->reset();
  EXPECT_TRUE(live().session_lost) << "closed: its lock went at once";
  EXPECT_TRUE(second->Drain().value());
  EXPECT_TRUE(second->Holds());
  EXPECT_FALSE(live().session_lost);
}

// Stores opened and closed on a few names from several threads at once,
// each writing as it goes: no race on the registry (AddressSanitizer sees
// a database freed while used), and every job lands in the database of its
// name while it lives.
TEST(MemoryStoreTest, ManyThreadsOpenAndCloseStoresAtOnce) {
  constexpr int kThreads = 6;
  std::atomic<int> failures{0}, kept{0};
  auto keeper = Open("memory:threads-0");  // keeps one of the names alive throughout
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures, &kept] {
      for (int i = 0; i < 200; ++i) {
        const int name = (t + i) % 3;
        // (fmt: "..." + std::to_string(name) trips a false -Wrestrict in g++ 12)
        auto s = OpenStore(fmt::format("memory:threads-{}", name));
        if (!s.has_value()) {
          ++failures;
          continue;
        }
        const JobSpec spec = OneJob();
        if (!(*s)->JobInsertMany(std::span<const JobSpec>(&spec, 1)).has_value()) {
          ++failures;
        } else if (name == 0) {
          ++kept;
        }
        if (!(*s)->JobCountUnfinished().has_value()) ++failures;
        if (i % 7 == 0) {
          auto session = (*s)->OpenSession(1, Millis(1000));
          if (!session.has_value()) ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Jobs(*keeper), kept.load()) << "every insert on the name kept alive";
}

}  // namespace
}  // namespace warden::testing
