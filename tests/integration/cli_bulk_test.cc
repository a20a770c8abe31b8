// `warden jobs` filters and pages, `jobs delete ID`, and the bulk commands
// (`jobs retry|cancel|delete FILTER [--dry-run]`, `jobs bulk`) as an
// operator runs them, on both backends; and an operation left unfinished by
// a killed CLI, resumed by `jobs bulk --resume` without repeating a batch.
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "harness.h"

namespace wt {
namespace {

class CliBulkTest : public IntegrationTest {
 protected:
  std::vector<int64_t> Ids(const Json& rows) {
    std::vector<int64_t> ids;
    for (const Json& j : rows) ids.push_back(j.value("id", int64_t{0}));
    return ids;
  }
};

TEST_P(CliBulkTest, FiltersPagesAndBulkCommandsByFilter) {
  std::vector<warden::JobSpec> specs(6);
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i].task = "t";
    specs[i].payload = {{"n", "item-" + std::to_string(i)}};
  }
  specs[0].queue = "mail";
  const std::vector<int64_t> ids = EnqueueMany(specs);

  CliResult page = Cli({"jobs", "--limit", "4"}, /*json=*/false);
  ASSERT_EQ(page.exit_code, 0) << page.err;
  const size_t at = page.err.find("next: --cursor ");
  ASSERT_NE(at, std::string::npos) << page.err;
  const std::string cursor = page.err.substr(at + 15, page.err.find('\n', at) - at - 15);
  CliResult rest = Cli({"jobs", "--limit", "4", "--cursor", cursor});
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  EXPECT_EQ(Ids(rest.json), (std::vector<int64_t>{ids[1], ids[0]}));
  EXPECT_EQ(rest.err.find("next:"), std::string::npos) << "the last page";
  CliResult by_id = Cli({"jobs", "--limit", "4", "--before", std::to_string(ids[2])});
  EXPECT_EQ(Ids(by_id.json), (std::vector<int64_t>{ids[1], ids[0]}));
  EXPECT_EQ(by_id.err, "") << "--json: stdout only";
  CliResult found = Cli({"jobs", "--search", "item-3"});
  EXPECT_EQ(Ids(found.json), std::vector<int64_t>{ids[3]}) << found.out;
  EXPECT_EQ(Cli({"jobs", "--cursor", "nope"}).exit_code, 2);
  EXPECT_EQ(Cli({"jobs", "--created-after", "yesterday"}).exit_code, 2);

  // A filter is required; a dry run counts and changes nothing.
  CliResult bare = Cli({"jobs", "delete"});
  EXPECT_EQ(bare.exit_code, 2) << bare.out;
  EXPECT_EQ(Cli({"jobs", "retry", "--state", "running"}).exit_code, 2);
  EXPECT_EQ(Cli({"jobs", "cancel", "5", "--queue", "default"}).exit_code, 2) << "id or filter";
  CliResult dry = Cli({"jobs", "cancel", "--queue", "default", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(dry.json.value("count", -1), 5);
  EXPECT_TRUE(JobInState(ids[1], warden::JobState::kAvailable));

  CliResult cancelled = Cli({"jobs", "cancel", "--queue", "default"});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
  EXPECT_EQ(cancelled.json.value("state", ""), "done");
  EXPECT_EQ(cancelled.json.value("done", -1), 5);
  EXPECT_TRUE(JobInState(ids[0], warden::JobState::kAvailable)) << "queue mail";
  EXPECT_TRUE(JobInState(ids[5], warden::JobState::kCancelled));

  CliResult refused = Cli({"jobs", "delete", std::to_string(ids[0])});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.json["error"].value("code", ""), "failed_precondition") << refused.out;
  CliResult one = Cli({"jobs", "delete", std::to_string(ids[5])});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_FALSE(GetJob(ids[5]).has_value());

  CliResult text = Cli({"jobs", "retry", "--state", "cancelled", "--search", "item-"}, false);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("4 of 4 jobs retried"), std::string::npos) << text.out;
  EXPECT_TRUE(JobInState(ids[1], warden::JobState::kAvailable));

  CliResult ops = Cli({"jobs", "bulk"});
  ASSERT_EQ(ops.exit_code, 0) << ops.err;
  ASSERT_EQ(ops.json.size(), 2u) << ops.out;
  EXPECT_EQ(ops.json[0].value("action", ""), "retry");
  EXPECT_EQ(ops.json[0]["filter"].value("q", ""), "item-");
  CliResult audit = Cli({"audit"});
  ASSERT_GE(audit.json.size(), 5u) << audit.out;
  EXPECT_EQ(audit.json[0].value("action", ""), "jobs.bulk_retry.done");
  EXPECT_EQ(audit.json[0].value("count", -1), 4);
}

// A CLI killed half-way: its operation stays, and `jobs bulk --resume`
// (once the killed runner's lease ran out) finishes it from its cursor.
TEST_P(CliBulkTest, AnOperationLeftByAKilledRunnerIsResumed) {
  std::vector<warden::JobSpec> specs(2500);
  for (auto& s : specs) s.task = "t";
  EnqueueMany(specs);
  auto op = client().BulkStart(warden::BulkAction::kCancel, warden::JobFilter{});
  ASSERT_TRUE(op.has_value()) << op.error().ToString();
  // One batch by a runner that then dies (it never comes back, and gives
  // nothing up: its lease must run out). Its progress callback throws
  // after the first committed batch, as a crash would cut it there.
  warden::Client::BulkRunOptions one;
  one.only = op->id;
  one.batch = 1000;
  // Long enough for the early `--resume` below to start and ask within it
  // on a loaded machine (1 s was not, under AddressSanitizer on two cores).
  one.lease = Millis(5000);
  one.progress = [](const warden::BulkOp&) { throw std::runtime_error("the runner dies"); };
  EXPECT_THROW((void)client().BulkRun("dead-runner", one), std::runtime_error);
  const auto died = std::chrono::steady_clock::now();  // after its lease was written
  const warden::BulkOp left = client().BulkGet(op->id).value();
  ASSERT_EQ(left.done, 1000);
  ASSERT_EQ(left.state, warden::BulkState::kRunning);
  ASSERT_EQ(left.owner, "dead-runner");

  CliResult early = Cli({"jobs", "bulk", "--resume"}, /*json=*/false);
  ASSERT_EQ(early.exit_code, 0) << early.err;
  EXPECT_NE(early.out.find("no unfinished operation"), std::string::npos)
      << "its runner's lease still runs: " << early.out;
  std::this_thread::sleep_until(died + Millis(5200));
  CliResult resumed = Cli({"jobs", "bulk", "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(resumed.json.value("done", -1), 2500) << resumed.out;
  EXPECT_EQ(resumed.json.value("batches", -1), 3);
  EXPECT_EQ(client().BulkCount(warden::BulkAction::kCancel, warden::JobFilter{}).value(), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, CliBulkTest, ::testing::ValuesIn(AllBackends()), BackendName);

}  // namespace
}  // namespace wt
