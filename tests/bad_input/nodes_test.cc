// Rows "nodes" of docs/bad-input.md: `warden nodes` with a bad inventory
// (each kind, as a file and on stdin), an empty one, a bad --capacity or
// node name, and a node no one knows: one clear line, nothing registered,
// nothing audited. `warden worker --node` with a bad name is a usage error.
#include <fstream>

#include "bad_input.h"

namespace bi {
namespace {

class NodesInputTest : public BadInputTest {
 protected:
  std::string File(const std::string& name, const std::string& text) {
    const std::string path = dir() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
};

TEST_P(NodesInputTest, BadInventoriesAndNamesChangeNothing) {
  ASSERT_TRUE(client().CountUnfinished().has_value());  // the database exists
  const std::vector<std::tuple<std::vector<std::string>, std::string, int>> cases = {
      {{"nodes", "sync", "--from", File("zero", "a 0\n")},
       "inventory line 1: capacity '0' is not a whole number from 1 to 1000000 (or - for none)",
       2},
      {{"nodes", "sync", "--from", File("fields", "a 1 2\n")},
       "inventory line 1: want NAME [CAPACITY], got 3 fields", 2},
      {{"nodes", "sync", "--from", File("name", "web-1 2\nweb/2 2\n")},
       "inventory line 2: node name 'web/2' may hold only letters, digits and . - _ :", 2},
      {{"nodes", "sync", "--from", File("twice", "a\na 2\n")},
       "the inventory names node 'a' twice", 2},
      {{"nodes", "sync", "--from", File("json", "[\"a\", {\"name\": \"b\", \"cap\": 2}]")},
       "inventory element 1: unknown key 'cap' (a node has name and capacity)", 2},
      {{"nodes", "sync", "--from", File("cut", "[\"a\", ")},
       "the inventory is not valid JSON (want an array of nodes)", 2},
      {{"nodes", "sync", "--from", File("empty", "# nothing\n")},
       "the inventory lists no node: a sync would remove every node", 2},
      {{"nodes", "sync", "--from", dir() + "/missing"}, "cannot read the inventory", 2},
      {{"nodes", "add", "web-1", "--capacity", "0"},
       "--capacity: capacity '0' is not a whole number from 1 to 1000000 (or - for none)", 2},
      {{"nodes", "add", "web 1"}, "node name 'web 1' may hold only letters, digits and . - _ :",
       2},
      {{"nodes", "disable", "web-9"},
       "no node 'web-9': not registered, and no live worker runs there (warden nodes ls)", 1},
      {{"nodes", "remove", "web-9"}, "node 'web-9' is not registered", 1},
      {{"worker", "--node", "a/b", "--exit-when-idle"},
       "--node: node name 'a/b' may hold only letters, digits and . - _ :", 2},
  };
  for (const auto& [args, says, code] : cases) {
    CliResult r = Warden(db(), args);
    std::string joined;
    for (const auto& a : args) joined += " " + a;
    EXPECT_EQ(r.exit_code, code) << "warden" << joined << "\n" << r.err;
    EXPECT_TRUE(OneLineError(r, says)) << "warden" << joined;
  }
  // The same bad inventory on stdin.
  CliResult piped = Warden(db(), {"nodes", "sync", "--from", "-"}, File("stdin", "a -1\n"));
  EXPECT_EQ(piped.exit_code, 2) << piped.err;
  EXPECT_TRUE(OneLineError(piped, "inventory line 1: capacity '-1' is not a whole number"));
  auto nodes = client().ListNodes();
  ASSERT_TRUE(nodes.has_value()) << nodes.error().ToString();
  EXPECT_TRUE(nodes->empty()) << "no node was registered";
  auto audit = client().ListAudit();
  ASSERT_TRUE(audit.has_value());
  EXPECT_TRUE(audit->empty()) << "nothing happened, so nothing is in the log";
}

INSTANTIATE_TEST_SUITE_P(Backends, NodesInputTest, ::testing::ValuesIn(wt::AllBackends()),
                         wt::BackendName);

}  // namespace
}  // namespace bi
