#include "core/inventory_trigger.h"

#include <gtest/gtest.h>

namespace warden {
namespace {

const std::set<std::string> kNone;

TEST(InventoryTrigger, RunsOnBecomingLeaderThenEveryInterval) {
  InventoryTrigger t(Millis(60'000));
  EXPECT_EQ(t.Due(0, /*leader=*/false, 0, kNone), std::nullopt);
  EXPECT_EQ(t.Due(10, true, 0, kNone), "now the maintenance leader");
  t.Ran(10);
  EXPECT_EQ(t.Due(59'000, true, 0, kNone), std::nullopt);
  EXPECT_EQ(t.Due(60'010, true, 0, kNone), "every 1m");
  t.Ran(60'010);
  EXPECT_EQ(t.Due(60'020, true, 0, kNone), std::nullopt);
  // Leadership lost and won again: a run at once, as a new leader.
  EXPECT_EQ(t.Due(60'030, false, 0, kNone), std::nullopt);
  EXPECT_EQ(t.Due(60'040, true, 0, kNone), "now the maintenance leader");
}

TEST(InventoryTrigger, RunsAtOnceAfterDeaths) {
  InventoryTrigger t(Millis(60'000));
  ASSERT_TRUE(t.Due(0, true, 0, kNone));
  t.Ran(0);
  EXPECT_EQ(t.Due(1000, true, 2, kNone), "2 workers declared dead");
  t.Ran(1000);
  EXPECT_EQ(t.Due(2000, true, 0, kNone), std::nullopt);
}

TEST(InventoryTrigger, UnservedWorkAsksOnceUntilServedAgain) {
  InventoryTrigger t(Millis(60'000));
  ASSERT_TRUE(t.Due(0, true, 0, {"queue a"}));  // the leader's first run covers it
  t.Ran(0);
  EXPECT_EQ(t.Due(1000, true, 0, {"queue a"}), std::nullopt);
  EXPECT_EQ(t.Due(2000, true, 0, {"queue a", "queue b"}),
            "work waits that no worker can run (queue b)");
  t.Ran(2000);
  EXPECT_EQ(t.Due(3000, true, 0, {"queue a", "queue b"}), std::nullopt);
  EXPECT_EQ(t.Due(4000, true, 0, {"queue b"}), std::nullopt);  // a served: nothing to do
  EXPECT_EQ(t.Due(5000, true, 0, {"queue a", "queue b"}),
            "work waits that no worker can run (queue a)");
}

TEST(InventoryTrigger, AFollowerNeverRunsAndForgetsWhatItSaw) {
  InventoryTrigger t(Millis(1000));
  for (int64_t now = 0; now < 10'000; now += 500) {
    EXPECT_EQ(t.Due(now, false, 3, {"queue a"}), std::nullopt);
  }
  EXPECT_EQ(t.Due(10'000, true, 0, {"queue a"}), "now the maintenance leader");
}

}  // namespace
}  // namespace warden
