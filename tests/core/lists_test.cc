#include "warden/lists.h"

#include <gtest/gtest.h>

namespace warden {
namespace {

TEST(Lists, SplitDropsEmptyItemsAndJoinRoundTrips) {
  EXPECT_EQ(SplitList("a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(SplitList("").empty());
  EXPECT_EQ(JoinList({"a", "b"}), "a,b");
  EXPECT_EQ(SplitList(JoinList({"x", "y", "z"})), (std::vector<std::string>{"x", "y", "z"}));
}

}  // namespace
}  // namespace warden
