// What `warden jobs` and `warden jobs show` tell a person: filters (by
// task, by several states), times relative to now, the worker of a running
// job by name, the last error's message on one line cut by display width,
// how many jobs matched when only some are shown; and the JSON keys that
// go with them.
#include <chrono>
#include <regex>
#include <set>
#include <sstream>

#include "core/clock.h"
#include "warden/text.h"
#include "harness.h"
#include "store/store.h"

namespace wt {
namespace {

class CliListingTest : public IntegrationTest {
 protected:
  // The ids of a `jobs ... --json` listing, in order.
  std::vector<int64_t> ListedIds(std::vector<std::string> args) {
    args.insert(args.begin(), "jobs");
    CliResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<int64_t> ids;
    EXPECT_TRUE(r.json.is_array()) << r.out;
    if (r.json.is_array()) {
      for (const Json& row : r.json) ids.push_back(row["id"].get<int64_t>());
    }
    return ids;
  }

  // The line of the text table that lists job `id` ("" if none).
  static std::string LineOf(const std::string& table, int64_t id) {
    std::istringstream lines(table);
    const std::regex starts("^ *" + std::to_string(id) + " ");
    for (std::string line; std::getline(lines, line);) {
      if (std::regex_search(line, starts)) return line;
    }
    return "";
  }

  // A job of task `task` that failed for good with `message`, written
  // through the store as an in-process handler's failure would be (a
  // command's messages are warden's own, and short).
  int64_t FailedJob(const std::string& task, const std::string& message) {
    auto store = warden::OpenStore(db());
    EXPECT_TRUE(store.has_value()) << store.error().ToString();
    if (!store.has_value()) return -1;
    warden::JobSpec spec;
    spec.task = task;
    spec.max_attempts = 1;
    auto added = (*store)->JobInsertMany(std::span<const warden::JobSpec>(&spec, 1));
    EXPECT_TRUE(added.has_value());
    warden::WorkerRegistration reg;
    reg.name = "handler-host-" + task;
    reg.node = "elsewhere";  // not this host: nothing here can judge its process
    reg.boot_id = "boot";
    reg.pid = 1;
    reg.version = "test";
    reg.tasks = {task};
    auto w = (*store)->WorkerRegister(reg);
    EXPECT_TRUE(w.has_value()) << w.error().ToString();
    warden::ClaimParams p;
    p.worker = *w;
    p.tasks = {task};
    auto claimed = (*store)->JobClaim(p);
    EXPECT_TRUE(claimed.has_value() && claimed->size() == 1u);
    if (!claimed.has_value() || claimed->size() != 1u) return -1;
    warden::JobOutcome fail;
    fail.ref = warden::JobRef{(*claimed)[0].id, (*claimed)[0].lease_token};
    fail.error.kind = warden::ErrorKind::kError;
    fail.error.message = message;
    EXPECT_TRUE((*store)->JobFinishMany(*w, std::span(&fail, 1)).has_value());
    (void)(*store)->WorkerStop(*w);
    return fail.ref.id;
  }
};

TEST_P(CliListingTest, FiltersByTaskAndByAnyOfSeveralStates) {
  const int64_t a = Add("true", {"alpha", "--delay", "1h"});  // scheduled
  const int64_t b = Add("true", {"beta", "--delay", "1h"});
  ASSERT_EQ(Cli({"jobs", "cancel", std::to_string(b)}).exit_code, 0);  // cancelled
  StartWorker("a");
  const int64_t c = Add("true", {"alpha"});  // succeeded
  const int64_t d = Add("exit 3", {"alpha", "--max-attempts", "1"});  // dead
  ASSERT_TRUE(WaitFor([&] {
    return JobInState(c, warden::JobState::kSucceeded) && JobInState(d, warden::JobState::kDead);
  }));

  const std::vector<int64_t> dead_or_cancelled = {d, b};
  EXPECT_EQ(ListedIds({"--state", "dead,cancelled"}), dead_or_cancelled);
  EXPECT_EQ(ListedIds({"--state", "dead", "--state", "cancelled"}), dead_or_cancelled);
  EXPECT_EQ(ListedIds({"--state", "cancelled,dead", "--state", "dead"}), dead_or_cancelled)
      << "a state named twice lists its jobs once";
  EXPECT_EQ(ListedIds({"--task", "alpha"}), (std::vector<int64_t>{d, c, a}));
  EXPECT_EQ(ListedIds({"--task", "alpha", "--state", "scheduled,dead"}),
            (std::vector<int64_t>{d, a}));
  EXPECT_EQ(ListedIds({"--task", "beta", "--state", "dead"}), std::vector<int64_t>{});

  // An unknown state is a usage error that lists the valid ones, whichever
  // form named it.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"jobs", "--state", "dead,bogus"}, {"jobs", "--state", "dead", "--state", "bogus"}}) {
    CliResult r = Cli(args, /*json=*/false);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err,
              "warden: unknown state 'bogus' (scheduled, available, running, succeeded, "
              "retryable, dead, cancelled, expired)\n");
  }
}

// The table says when a waiting job runs, how long a running one has run
// and on which worker, how long a finished one took, and why it failed.
TEST_P(CliListingTest, TableShowsTimesWorkerAndLastError) {
  const int64_t later = Add("true", {"--delay", "1h"});
  StartWorker("listing-box");
  const int64_t running = Add("sleep 30");
  const int64_t dead = Add("exit 3", {"--max-attempts", "1"});
  const int64_t done = Add("true");
  ASSERT_TRUE(WaitFor([&] {
    return JobInState(running, warden::JobState::kRunning) &&
           JobInState(dead, warden::JobState::kDead) &&
           JobInState(done, warden::JobState::kSucceeded);
  }));
  CliResult r = Cli({"jobs"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("WHEN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("WORKER"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(LineOf(r.out, later), std::regex(" runs in (59m\\d+s|1h)( |$)")))
      << r.out;
  EXPECT_TRUE(std::regex_search(LineOf(r.out, running),
                                std::regex(" for \\d+(ms|\\.\\ds|s) +listing-box")))
      << r.out;
  EXPECT_TRUE(std::regex_search(LineOf(r.out, done), std::regex(" took \\d+(ms|\\.\\ds), ")))
      << r.out;
  EXPECT_NE(LineOf(r.out, dead).find("error: exited with status 3"), std::string::npos) << r.out;
  EXPECT_EQ(LineOf(r.out, dead).find("listing-box"), std::string::npos)
      << "only running jobs name their worker in the table: " << r.out;
  EXPECT_EQ(r.out.find("showing"), std::string::npos) << "every job is shown: " << r.out;
}

// A message of any length and any bytes is one line of the table, cut by
// display width (never inside a character) with a marker; --wide shows it
// whole, still on one line.
TEST_P(CliListingTest, LastErrorMessageIsOneLineCutByDisplayWidth) {
  // 40 characters two columns wide each, then a second line and an escape.
  std::string wide_text;
  for (int i = 0; i < 40; ++i) wide_text += "\u8A9E";
  const std::string message = wide_text + "\nsecond line \x1b[31mred";
  const int64_t id = FailedJob("handler", message);
  ASSERT_GT(id, 0);

  CliResult r = Cli({"jobs"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(warden::InvalidUtf8At(r.out), std::string::npos) << r.out;
  const std::string line = LineOf(r.out, id);
  // "error: " (7 columns), 26 wide characters (52), the marker: 60 columns.
  EXPECT_NE(line.find("error: " + wide_text.substr(0, 26 * 3) + "\u2026"), std::string::npos)
      << r.out;
  EXPECT_EQ(line.find(wide_text.substr(0, 27 * 3)), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("second line"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;

  r = Cli({"jobs", "--wide"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(LineOf(r.out, id).find("error: " + wide_text + " second line ?[31mred"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;

  // The JSON keeps the message as stored.
  r = Cli({"jobs"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(r.json.is_array() && r.json.size() == 1u) << r.out;
  EXPECT_EQ(r.json[0]["last_error"], "error");
  EXPECT_EQ(r.json[0]["last_error_message"], message);
}

// Columns line up whatever their times say: a job enqueued 400 days ago
// ("400d5h ago") beside one enqueued now.
TEST_P(CliListingTest, TimeColumnsLineUpWhateverTheirWidth) {
  {
    // The store's clock (on PostgreSQL, standing in for the server's).
    warden::FakeClock past(
        std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch())
            .count() -
        Millis(std::chrono::hours(400 * 24 + 5)).count());
    warden::StoreOptions options;
    options.clock = &past;
    options.database_clock = &past;
    auto store = warden::OpenStore(db(), options);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    warden::JobSpec spec;
    spec.task = "old";
    ASSERT_TRUE((*store)->JobInsertMany(std::span<const warden::JobSpec>(&spec, 1)).has_value());
  }
  ASSERT_GT(Add("true", {"new"}), 0);
  CliResult r = Cli({"jobs"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" 400d5h ago  ready 400d5h ago"), std::string::npos) << r.out;
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  const size_t when = line.find("WHEN");
  std::set<size_t> ready;
  while (std::getline(lines, line)) ready.insert(line.find("ready "));
  EXPECT_EQ(ready, std::set<size_t>{when}) << r.out;
}

// Only some of the jobs shown: the table's last line says how many
// matched; --json stays an array of the rows.
TEST_P(CliListingTest, SaysHowManyMatchedWhenTheLimitCutsTheList) {
  for (int i = 0; i < 3; ++i) ASSERT_GT(Add("true", {"counted", "--delay", "1h"}), 0);
  ASSERT_GT(Add("true", {"other", "--delay", "1h"}), 0);
  CliResult r = Cli({"jobs", "--task", "counted", "--limit", "2"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.ends_with("\nshowing 2 of 3 jobs, newest first (--limit N shows more)\n"))
      << r.out;
  // No worker runs them: the note is on stderr, beside the table.
  EXPECT_EQ(r.err.rfind("warden: note: waiting for a worker", 0), 0u) << r.err;
  r = Cli({"jobs", "--task", "counted", "--limit", "3"}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("showing"), std::string::npos) << r.out;

  r = Cli({"jobs", "--task", "counted", "--limit", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(r.json.is_array()) << r.out;
  EXPECT_EQ(r.json.size(), 2u);
  EXPECT_EQ(r.err, "");
}

// `jobs show`: priority, run time, timeout, keys, the worker by name for
// the job and for each attempt, and a failed command's stdout tail beside
// its stderr tail, as text and as JSON.
TEST_P(CliListingTest, ShowNamesTheWorkerAndTheJobsSettings) {
  StartWorker("show-box");
  const int64_t id = Add("echo to-stdout; echo to-stderr >&2; exit 3",
                         {"--max-attempts", "1", "--priority", "7", "--timeout", "90s",
                          "--unique-key", "uk-1", "--concurrency-key", "ck-1"});
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kDead); }));
  CliResult r = Cli({"jobs", "show", std::to_string(id)}, /*json=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex("priority: +7, run at \\S+Z \\((now|\\d+s ago)\\)")))
      << r.out;
  EXPECT_NE(r.out.find("timeout 1.5m"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("keys:      unique uk-1, concurrency ck-1\n"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("worker: +show-box \\(id \\d+\\)\n"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("attempt 1: worker show-box \\(id \\d+\\)")))
      << r.out;
  EXPECT_NE(r.out.find("last error: error: exited with status 3\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    stdout (10 bytes kept; a worker keeps the last 4 KiB of it):\n"
                       "      to-stdout\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("      to-stderr\n"), std::string::npos) << r.out;

  Json j = Show(id);
  EXPECT_EQ(j["worker_name"], "show-box") << j.dump();
  EXPECT_EQ(j["last_error_message"], "exited with status 3") << j.dump();
  ASSERT_EQ(j["attempts"].size(), 1u) << j.dump();
  EXPECT_EQ(j["attempts"][0]["worker_name"], "show-box") << j.dump();
  EXPECT_EQ(j["attempts"][0]["error"]["stdout_tail"], "to-stdout\n") << j.dump();

  // Every key always there, null when empty.
  const int64_t waiting = Add("true", {"--delay", "1h"});
  Json w = Show(waiting);
  for (const char* key : {"worker", "worker_name", "last_error", "last_error_message"}) {
    ASSERT_TRUE(w.contains(key)) << key << ": " << w.dump();
    EXPECT_TRUE(w[key].is_null()) << key << ": " << w.dump();
  }
}

// A job that crashed on n1 while a worker on n2 could take it: `jobs show`
// says which node it avoids, until when, for as long as the mark holds (the
// crash's backoff plus 2 s: a slow machine may show the CLI after that).
TEST_P(CliListingTest, ShowSaysWhichNodeAJobAvoidsAfterACrash) {
  auto store = warden::OpenStore(db());
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  warden::JobSpec spec;
  spec.task = "t";
  ASSERT_TRUE((*store)->JobInsertMany(std::span<const warden::JobSpec>(&spec, 1)).has_value());
  auto on = [&](const std::string& name, const std::string& node) {
    warden::WorkerRegistration reg;
    reg.name = name;
    reg.node = node;
    reg.host = "elsewhere";  // not this host: nothing here judges its process
    reg.boot_id = "boot";
    reg.pid = 1;
    reg.version = "test";
    reg.tasks = {"t"};
    auto w = (*store)->WorkerRegister(reg);
    EXPECT_TRUE(w.has_value()) << w.error().ToString();
    return w.has_value() ? *w : warden::WorkerId{0};
  };
  const warden::WorkerId crashed_on = on("box-1", "n1"), other = on("box-2", "n2");
  warden::ClaimParams p;
  p.worker = crashed_on;
  p.tasks = {"t"};
  p.node = "n1";
  auto claimed = (*store)->JobClaim(p);
  ASSERT_TRUE(claimed.has_value() && claimed->size() == 1u);
  warden::JobOutcome crash;
  crash.ref = warden::JobRef{(*claimed)[0].id, (*claimed)[0].lease_token};
  crash.error.kind = warden::ErrorKind::kCrash;
  crash.error.message = "killed by signal 9";
  ASSERT_TRUE((*store)->JobFinishMany(crashed_on, std::span(&crash, 1)).has_value());
  const auto shown_from = std::chrono::steady_clock::now();
  CliResult r = Cli({"jobs", "show", std::to_string(crash.ref.id)}, /*json=*/false);
  const auto took = std::chrono::steady_clock::now() - shown_from;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const warden::JobInfo job = (*store)->JobGet(crash.ref.id).value();
  ASSERT_TRUE(job.avoid_node_until.has_value());
  const std::regex line("avoids: +node n1 until \\S+Z \\((in \\d+s|now)\\): its last attempt was "
                        "lost or crashed there\n");
  if (!std::regex_search(r.out, line)) {
    EXPECT_GT(took, std::chrono::milliseconds(2500)) << "no avoids line, though shown at once:\n"
                                                     << r.out;
  }
  EXPECT_EQ(Show(crash.ref.id)["avoid_node"].value("node", ""), "n1");
  (void)(*store)->WorkerStop(crashed_on);
  (void)(*store)->WorkerStop(other);
}

INSTANTIATE_TEST_SUITE_P(Backends, CliListingTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
