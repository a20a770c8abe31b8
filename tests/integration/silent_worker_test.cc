// A worker that stops heartbeating (SIGKILLed, or frozen with SIGSTOP) when
// no other process is there to notice (issue 35, §2), and workers whose node
// is full or takes no work (§3): what every surface shows, on both backends,
// with real processes, the real CLI and a real `warden serve` over HTTP.
// Silence is a display (warden/worker_silence.h), not a verdict: the row
// stays `active` and the job `running` until recovery decides.
#include <chrono>
#include <csignal>
#include <fstream>

#include "harness.h"

namespace wt {
namespace {

class SilentWorkerTest : public IntegrationTest {
 protected:
  // `warden serve --no-auth` on a free port of 127.0.0.1; `maintenance`:
  // without --no-maintenance (a server that proves deaths would end the
  // silences these tests look at).
  void StartServer(bool maintenance = false) {
    const std::string base = dir() + "/serve";
    std::vector<std::string> argv = {WARDEN_BIN, "--db",        db(),       "serve",
                                     "--listen", "127.0.0.1:0", "--no-auth"};
    if (!maintenance) argv.push_back("--no-maintenance");
    server_ = warden::testing::Child::Spawn(argv, base + ".out", base + ".err");
    ASSERT_TRUE(WaitFor([&] {
      const std::string log = server_->Stderr();
      const size_t at = log.find("serving on 127.0.0.1:");
      if (at != std::string::npos) port_ = std::atoi(log.c_str() + at + 21);
      return port_ > 0 || server_->Exited();
    }));
    ASSERT_GT(port_, 0) << server_->Stderr();
  }
  // GET `path` with curl: the body (empty, and a test failure, unless 200).
  std::string Get(const std::string& path) {
    const std::string base = dir() + "/curl-" + std::to_string(++requests_);
    CliResult r = RunToExit({"/usr/bin/curl", "-sS", "-f",
                             "http://127.0.0.1:" + std::to_string(port_) + path},
                            base, Millis(30'000));
    EXPECT_EQ(r.exit_code, 0) << path << ": " << r.err;
    return r.out;
  }
  Json GetJson(const std::string& path) { return Json::parse(Get(path), nullptr, false); }
  static bool Has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }
  static bool HasReason(const Json& why, const std::string& code, std::string* message = nullptr) {
    if (!why.contains("reasons")) return false;
    for (const Json& r : why["reasons"]) {
      if (r.value("code", "") != code) continue;
      if (message) *message = r.value("message", "");
      return true;
    }
    return false;
  }
  Json Why(int64_t id) { return Cli({"jobs", "why", std::to_string(id)}).json; }
  std::string Text(const std::vector<std::string>& args) {
    CliResult r = Cli(args, /*json=*/false);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  std::unique_ptr<warden::testing::Child> server_;
  int port_ = -1;
  int requests_ = 0;
};

TEST_P(SilentWorkerTest, AKilledOnlyWorkerIsShownSilentEverywhereAndNoVerdictFollows) {
  Worker& w = StartWorker("w7", FastFlags({{"--queues", "t"}}));
  const int64_t wid = WorkerIdOf(w.pid());
  const int64_t id = Add(Job("log start; sleep 60"), {"--queue", "t"});
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); })) << w.Log();
  StartServer();
  // Alive: not silent, counted live, and the maintenance leader.
  ASSERT_TRUE(WaitFor([&] {
    const std::string m = Get("/metrics");
    return Has(m, "warden_maintenance_leader{worker=\"w7\"} 1") &&
           Has(m, "warden_queue_live_workers{queue=\"t\"} 1") &&
           Has(m, "warden_workers{state=\"active\"} 1") &&
           !WorkerRow(wid).value("silent", true);
  })) << Get("/metrics");

  w.proc->Kill();
  // Its keepalive (1s) passes with no heartbeat: silent on every surface.
  ASSERT_TRUE(WaitFor([&] { return WorkerRow(wid).value("silent", false); }, Millis(20'000)))
      << WorkerRow(wid).dump();
  const Json row = WorkerRow(wid);
  EXPECT_EQ(row.value("state", ""), "active") << "a display, not a verdict";
  EXPECT_EQ(row.value("keepalive_ms", 0), 1000);
  EXPECT_GT(row.value("silent_for_ms", 0), 1000);

  const std::string workers = Text({"workers"});
  EXPECT_TRUE(Has(workers, "silent") && Has(workers, "no heartbeat for") &&
              Has(workers, "keepalive 1s"))
      << workers;
  EXPECT_TRUE(Has(Text({"jobs"}), "w7 (silent ")) << Text({"jobs"});
  const std::string show = Text({"jobs", "show", std::to_string(id)});
  EXPECT_TRUE(Has(show, "silent: no heartbeat for")) << show;
  std::string message;
  EXPECT_TRUE(HasReason(Why(id), "worker_silent", &message)) << Why(id).dump();
  EXPECT_TRUE(Has(message, "w7 is silent: no heartbeat for")) << message;

  // Over HTTP: the worker's JSON, the job's why, and /metrics.
  const Json api = GetJson("/v1/workers");
  ASSERT_TRUE(api.contains("workers") && api["workers"].size() == 1) << api.dump();
  EXPECT_TRUE(api["workers"][0].value("silent", false)) << api.dump();
  EXPECT_GT(api["workers"][0].value("silent_for_ms", 0), 1000) << api.dump();
  EXPECT_TRUE(HasReason(GetJson("/v1/jobs/" + std::to_string(id) + "/why"), "worker_silent"));
  const std::string m = Get("/metrics");
  EXPECT_TRUE(Has(m, "warden_workers{state=\"active\"} 0")) << m;
  EXPECT_TRUE(Has(m, "warden_workers{state=\"silent\"} 1")) << m;
  EXPECT_TRUE(Has(m, "warden_queue_live_workers{queue=\"t\"} 0")) << m;
  EXPECT_FALSE(Has(m, "warden_maintenance_leader{")) << "a silent leader is dropped\n" << m;
  EXPECT_TRUE(Has(m, "warden_jobs{queue=\"t\",state=\"running\"} 1")) << m;
  EXPECT_TRUE(JobInState(id, warden::JobState::kRunning)) << "recovery is not the display's";
}

// With `warden serve` running (it takes part in maintenance by default), a
// fleet of one worker whose worker was SIGKILLed needs no second worker:
// the server proves the death on its host, the job is back in its queue,
// and the dead worker is dead on every surface. The server's own row
// claims nothing, so it is no queue's live worker.
TEST_P(SilentWorkerTest, ServeProvesTheDeathOfAFleetsOnlyWorker) {
  Worker& w = StartWorker("w7", FastFlags({{"--queues", "t"}}));
  const int64_t wid = WorkerIdOf(w.pid());
  const int64_t id = Add(Job("log start; sleep 60"), {"--queue", "t"});
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(id, 1, "start"); })) << w.Log();
  StartServer(/*maintenance=*/true);
  Json serve_row;
  ASSERT_TRUE(WaitFor([&] {
    for (const Json& row : Cli({"workers"}).json) {
      if (row.value("name", "").rfind("serve-", 0) == 0) serve_row = row;
    }
    return !serve_row.is_null();
  })) << Cli({"workers"}).out << server_->Stderr();
  EXPECT_EQ(serve_row.value("concurrency", -1), 0) << serve_row.dump();
  EXPECT_TRUE(serve_row.value("maintenance_only", false)) << serve_row.dump();
  EXPECT_TRUE(Has(Text({"workers"}), "maintenance only")) << Text({"workers"});
  ASSERT_TRUE(WaitFor([&] {
    return Has(Get("/metrics"), "warden_queue_live_workers{queue=\"t\"} 1");
  })) << Get("/metrics");

  const auto killed_at = std::chrono::steady_clock::now();
  w.proc->Kill();
  // Proven dead by the server (same host): the job is back within the
  // bound a second worker gives (docs/recovery.md), not after a keepalive
  // or a lease.
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, warden::JobState::kAvailable); },
                      Millis(20'000)))
      << Cli({"jobs", "show", std::to_string(id)}).out << server_->Stderr();
  const auto back_after = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - killed_at)
                              .count();
  EXPECT_LT(back_after, 5'000) << "the job came back " << back_after << " ms after the kill";
  EXPECT_EQ(WorkerRow(wid).value("state", ""), "dead") << WorkerRow(wid).dump();
  const std::string m = Get("/metrics");
  EXPECT_TRUE(Has(m, "warden_queue_live_workers{queue=\"t\"} 0")) << m;
  EXPECT_TRUE(Has(m, "warden_queue_unserved_jobs{queue=\"t\"} 1")) << m;
  EXPECT_TRUE(Has(server_->Stderr(), "proved 1 worker dead")) << server_->Stderr();
}

TEST_P(SilentWorkerTest, AFrozenWorkerIsSilentUntilItHeartbeatsAgain) {
  Worker& w = StartWorker("w8", FastFlags({{"--queues", "t"}}));
  const int64_t wid = WorkerIdOf(w.pid());
  ASSERT_TRUE(FreezeBetweenTransactions(w));
  ASSERT_TRUE(WaitFor([&] { return WorkerRow(wid).value("silent", false); }, Millis(20'000)))
      << WorkerRow(wid).dump();
  EXPECT_TRUE(Has(Text({"workers"}), "no heartbeat for"));
  ASSERT_EQ(kill(w.pid(), SIGCONT), 0);
  // Thawed, it heartbeats again and is not silent. (Its own maintenance
  // pass may by then have judged its old row silent for the keepalive and
  // marked it dead: it registers again, a new row under its name. That is
  // recovery's protocol; the display only follows the rows.)
  ASSERT_TRUE(WaitFor([&] {
    const Json live = Cli({"workers"}).json;
    return live.is_array() && live.size() == 1 && live[0].value("name", "") == "w8" &&
           live[0].value("state", "") == "active" && !live[0].value("silent", true);
  }, Millis(20'000))) << Cli({"workers"}).out << w.Log();
}

TEST_P(SilentWorkerTest, AFullNodeAndADisabledNodeAreWhatHoldsAJobBack) {
  ASSERT_EQ(Cli({"nodes", "add", "vm", "--capacity", "2"}).exit_code, 0);
  // A keepalive the loaded machine cannot miss: these workers must look live.
  Worker& a = StartWorker(
      "a", FastFlags({{"--node", "vm"}, {"--keepalive-threshold", "10s"},
                      {"--poll-interval", "50ms"}}),
      4);
  const int64_t one = Add(Job("log start; sleep 60"));
  const int64_t two = Add(Job("log start; sleep 60"));
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(one, 1, "start") && LedgerHas(two, 1, "start"); }))
      << a.Log();
  const int64_t third = Add(Job("log start; sleep 60"));
  StartServer();
  std::string message;
  ASSERT_TRUE(WaitFor([&] { return HasReason(Why(third), "node_capacity_full", &message); }))
      << Why(third).dump();
  EXPECT_EQ(message.rfind("node vm runs 2 of its capacity 2", 0), 0u) << message;
  EXPECT_FALSE(HasReason(Why(third), "claimable"));
  EXPECT_TRUE(HasReason(GetJson("/v1/jobs/" + std::to_string(third) + "/why"),
                        "node_capacity_full"));
  const std::string full = Text({"jobs", "show", std::to_string(third)});
  EXPECT_TRUE(Has(full, "waiting:   node vm runs 2 of its capacity 2")) << full;

  ASSERT_EQ(Cli({"nodes", "disable", "vm"}).exit_code, 0);
  const CliResult added = Cli({"add", "--cmd", Job("log ran")}, /*json=*/false);
  ASSERT_EQ(added.exit_code, 0) << added.err;
  const int64_t quick = std::atoll(added.out.c_str());
  ASSERT_GT(quick, 0) << added.out;
  const std::string fix = "no worker on an enabled node serves it; warden nodes enable vm";
  EXPECT_TRUE(Has(added.err, "waits: " + fix)) << added.err;
  ASSERT_TRUE(HasReason(Why(quick), "node_disabled", &message)) << Why(quick).dump();
  EXPECT_EQ(message, fix);
  EXPECT_FALSE(HasReason(Why(quick), "claimable"));
  const Json http = GetJson("/v1/jobs/" + std::to_string(quick) + "/why");
  EXPECT_TRUE(HasReason(http, "node_disabled", &message)) << http.dump();
  EXPECT_EQ(message, fix);
  const std::string show = Text({"jobs", "show", std::to_string(quick)});
  EXPECT_TRUE(Has(show, "waiting:   " + fix)) << show;
  EXPECT_FALSE(Has(show, "no active worker runs it")) << show;

  EXPECT_TRUE(WorkerRow(WorkerIdOf(a.pid())).value("node_disabled", false));
  EXPECT_TRUE(Has(Text({"workers"}), "its node takes no work")) << Text({"workers"});
  const Json api = GetJson("/v1/workers");
  ASSERT_TRUE(api.contains("workers") && api["workers"].size() == 1) << api.dump();
  EXPECT_TRUE(api["workers"][0].value("node_disabled", false)) << api.dump();
  const std::string m = Get("/metrics");
  EXPECT_TRUE(Has(m, "warden_queue_live_workers{queue=\"default\"} 0")) << m;
}

INSTANTIATE_TEST_SUITE_P(Backends, SilentWorkerTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);

}  // namespace
}  // namespace wt
