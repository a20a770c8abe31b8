// ParseInventory (warden/nodes.h): both forms, and one clear error for each
// kind of bad input, naming its line or element.
#include <gtest/gtest.h>

#include "warden/nodes.h"

namespace warden {
namespace {

std::string ErrorOf(std::string_view text) {
  auto r = ParseInventory(text);
  return r.has_value() ? "(parsed)" : r.error().message();
}

TEST(InventoryTest, LinesWithCapacitiesCommentsAndBlanks) {
  auto r = ParseInventory("# the fleet\nweb-1 8\n\n  web-2\t-  # no limit\ndb.example.com 2\r\n");
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  const std::vector<NodeSpec> want = {
      {"web-1", 8}, {"web-2", std::nullopt}, {"db.example.com", 2}};
  EXPECT_EQ(*r, want);
}

TEST(InventoryTest, JsonNamesAndObjects) {
  auto r =
      ParseInventory(R"( [ "a", {"name": "b", "capacity": 3}, {"name": "c", "capacity": null} ])");
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  const std::vector<NodeSpec> want = {{"a", std::nullopt}, {"b", 3}, {"c", std::nullopt}};
  EXPECT_EQ(*r, want);
  EXPECT_TRUE(ParseInventory("").value().empty());
  EXPECT_TRUE(ParseInventory("[]").value().empty());
}

TEST(InventoryTest, BadInputIsOneClearError) {
  EXPECT_EQ(ErrorOf("a 1\nb 0\n"),
            "inventory line 2: capacity '0' is not a whole number from 1 to 1000000 (or - for "
            "none)");
  EXPECT_EQ(ErrorOf("a 1 2"), "inventory line 1: want NAME [CAPACITY], got 3 fields");
  EXPECT_EQ(ErrorOf("a/b"),
            "inventory line 1: node name 'a/b' may hold only letters, digits and . - _ :");
  EXPECT_EQ(ErrorOf("a\na"), "the inventory names node 'a' twice");
  EXPECT_EQ(ErrorOf("a 99999999"),
            "inventory line 1: capacity '99999999' is not a whole number from 1 to 1000000 (or "
            "- for none)");
  EXPECT_EQ(ErrorOf("[1]"),
            "inventory element 0: want a name or {\"name\": ..., \"capacity\": ...}");
  EXPECT_EQ(ErrorOf(R"([{"name": "a", "cap": 1}])"),
            "inventory element 0: unknown key 'cap' (a node has name and capacity)");
  EXPECT_EQ(ErrorOf(R"([{"name": "a", "capacity": 1.5}])"),
            "inventory element 0: \"capacity\" must be a whole number or null");
  EXPECT_EQ(ErrorOf(R"([{"name": "a", "capacity": 0}])"),
            "inventory element 0: a node's capacity must be from 1 to 1000000 (to stop a node, "
            "disable it)");
  EXPECT_EQ(ErrorOf("{\"a\": 1}"), "a JSON inventory must be an array of nodes");
  EXPECT_EQ(ErrorOf("[\"a\""), "the inventory is not valid JSON (want an array of nodes)");
}

TEST(InventoryTest, CapacityText) {
  EXPECT_EQ(ParseNodeCapacity("-").value(), std::nullopt);
  EXPECT_EQ(ParseNodeCapacity("12").value(), 12);
  EXPECT_FALSE(ParseNodeCapacity("+1").has_value());
  EXPECT_FALSE(ParseNodeCapacity("").has_value());
}

}  // namespace
}  // namespace warden
