// Rows "flow limits" of docs/bad-input.md: `warden queues limit` with a
// malformed rate (N/INTERVAL), a concurrency that is not a whole number
// from 1 to 1,000,000, nothing to set, or --clear beside a limit, is a usage
// error (exit 2, one line) before the database is touched; a queue name no
// worker could serve is refused as `add` refuses it. Nothing is limited
// and nothing is audited.
#include "bad_input.h"

namespace bi {
namespace {

class FlowLimitsTest : public BadInputTest {};

TEST_P(FlowLimitsTest, BadLimitsAreUsageErrorsAndChangeNothing) {
  ASSERT_TRUE(client().CountUnfinished().has_value());  // the database exists
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"queues", "limit", "q", "--rate", "10"}, "--rate: invalid rate '10': want N/INTERVAL"},
      {{"queues", "limit", "q", "--rate", "10 per second"}, "want N/INTERVAL"},
      {{"queues", "limit", "q", "--rate", "0/1s"}, "the count must be a whole number from 1"},
      {{"queues", "limit", "q", "--rate", "-5/1s"}, "the count must be a whole number from 1"},
      {{"queues", "limit", "q", "--rate", "1000001/1s"}, "from 1 to 1000000"},
      {{"queues", "limit", "q", "--rate", "10/0s"}, "the interval must be at least 1ms"},
      {{"queues", "limit", "q", "--rate", "10/1x"}, "the interval is not a duration"},
      {{"queues", "limit", "q", "--rate", "10/400d"}, "from 1ms to 365d"},
      {{"queues", "limit", "q", "--rate", "10/1s\n2"}, "invalid rate '10/1s 2'"},
      {{"queues", "limit", "q", "--concurrency", "-1"},
       "--concurrency: invalid concurrency limit '-1': want a whole number from 1 to 1000000"},
      {{"queues", "limit", "q", "--concurrency", "0"}, "(to stop a queue, pause it)"},
      {{"queues", "limit", "q", "--concurrency", "1.5"}, "invalid concurrency limit '1.5'"},
      {{"queues", "limit", "q", "--concurrency", "0x10"}, "invalid concurrency limit '0x10'"},
      {{"queues", "limit", "q", "--concurrency", "99999999999999999999"}, "from 1 to 1000000"},
      {{"queues", "limit", "q"}, "give --concurrency N, --rate N/INTERVAL (or both), or --clear"},
      {{"queues", "limit", "q", "--clear", "--rate", "1/s"}, "--clear removes every limit"},
      {{"queues", "limit", "a,b", "--concurrency", "2"}, "queue must not contain ','"},
      {{"queues", "limit", "", "--concurrency", "2"}, "queue must not be empty"},
  };
  for (const auto& [args, says] : cases) {
    CliResult r = Warden(db(), args);
    std::string joined;
    for (const auto& a : args) joined += " " + a;
    EXPECT_EQ(r.exit_code, 2) << "warden" << joined << "\n" << r.err;
    EXPECT_TRUE(OneLineError(r, says)) << "warden" << joined;
    EXPECT_EQ(r.out, "") << "warden" << joined;
  }
  auto queues = client().ListQueues();
  ASSERT_TRUE(queues.has_value()) << queues.error().ToString();
  EXPECT_TRUE(queues->empty()) << "no queue was limited";
  auto audit = client().ListAudit();
  ASSERT_TRUE(audit.has_value());
  EXPECT_TRUE(audit->empty()) << "nothing happened, so nothing is in the log";
}

INSTANTIATE_TEST_SUITE_P(Backends, FlowLimitsTest, ::testing::ValuesIn(wt::AllBackends()),
                         wt::BackendName);

}  // namespace
}  // namespace bi
