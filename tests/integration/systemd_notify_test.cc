// systemd's notify protocol (issue 22, deploy/systemd/): a real `warden
// worker` and a real `warden serve` started with NOTIFY_SOCKET (and
// WATCHDOG_USEC / WATCHDOG_PID, as systemd sets them for a Type=notify unit
// with WatchdogSec=) naming a datagram socket this test listens on.
//  - READY=1 only once the process does its work: a worker registered and
//    claiming (a job added at that moment runs), a server answering HTTP;
//  - WATCHDOG=1 about every half of WATCHDOG_USEC, from the main pid, and
//    still while every database write is held up (a worker waiting out
//    an outage must not be restarted by systemd);
//  - SIGTERM: STOPPING=1, the drain, exit 0;
//  - jobs do not inherit NOTIFY_SOCKET or WATCHDOG_*;
//  - a socket nobody listens on, or a watchdog meant for another pid,
//    changes nothing else.
// The worker's wait for a PostgreSQL server that is down (no READY=1 until
// it registers) is in pg_outage_test.cc, which has a server it may stop.
#include <signal.h>

#include <algorithm>
#include <thread>

#include "database_lock.h"
#include "harness.h"
#include "notify_socket.h"

namespace wt {
namespace {

using warden::JobState;

constexpr int64_t kWatchdogUsec = 1'000'000;  // pings every 500 ms

class SystemdNotifyTest : public IntegrationTest {
 protected:
  // Runs the rest as systemd would run a unit's main process: NOTIFY_SOCKET
  // and WATCHDOG_USEC in its environment, and WATCHDOG_PID its own pid
  // (the shell's, which it keeps when it execs).
  std::vector<std::string> Systemd(const std::string& socket, int64_t watchdog_usec,
                                   const std::string& watchdog_pid = "$$") const {
    return {"/usr/bin/env", "NOTIFY_SOCKET=" + socket,
            "WATCHDOG_USEC=" + std::to_string(watchdog_usec), "/bin/sh", "-c",
            "export WATCHDOG_PID=" + watchdog_pid + "; exec \"$@\"", "sh"};
  }

  // The WATCHDOG=1 pings that came in [from, to), and the longest gap
  // between two of them (from `from`).
  static std::pair<int, int64_t> Pings(const NotifySocket& n, SteadyTime from, SteadyTime to) {
    int count = 0;
    SteadyTime last = from;
    int64_t gap = 0;
    for (const NotifySocket::Message& m : n.With("WATCHDOG=1")) {
      if (m.at < from || m.at >= to) continue;
      ++count;
      gap = std::max<int64_t>(
          gap, std::chrono::duration_cast<std::chrono::milliseconds>(m.at - last).count());
      last = m.at;
    }
    return {count, gap};
  }
};

TEST_P(SystemdNotifyTest, WorkerIsReadyWhenItRunsJobsFeedsTheWatchdogAndSaysStopping) {
  NotifySocket notify(dir() + "/notify");
  // Waiting before the worker exists: claimed at once when it is ready.
  const int64_t early = Add(Job("if [ -z \"$NOTIFY_SOCKET$WATCHDOG_USEC$WATCHDOG_PID\" ]; "
                                "then log clean; else log leaked; fi"));
  ASSERT_GT(early, 0);
  Worker& w = StartWorker("sd", FastFlags({{"--shutdown-timeout", "20s"}}), 2,
                          /*wait_started=*/false, Systemd(notify.path(), kWatchdogUsec));
  ASSERT_TRUE(WaitFor([&] { return notify.Has("READY=1") || w.proc->Exited(); }))
      << w.Log() << notify.Dump();
  const SteadyTime ready = std::chrono::steady_clock::now();
  // At READY=1 it is registered, and its start-up line is out.
  EXPECT_GT(WorkerIdOf(w.pid()), 0) << w.Log();
  EXPECT_TRUE(w.LogHas("started as worker")) << w.Log();
  const int64_t later = Add(Job("log ran"));
  ASSERT_TRUE(WaitFor([&] { return JobInState(later, JobState::kSucceeded); })) << w.Log();
  ASSERT_TRUE(WaitFor([&] { return JobInState(early, JobState::kSucceeded); })) << w.Log();
  EXPECT_TRUE(LedgerHas(early, 1, "clean")) << "a job inherited the worker's NOTIFY_SOCKET";

  // The pings, over 2 s: every 500 ms (a gap under the watchdog's 1 s
  // means systemd would never have fired; allow a slow sanitized run).
  // A stimulus, not a wait: the pings are counted over this time.
  std::this_thread::sleep_for(Millis(2000));
  const auto [count, gap] = Pings(notify, ready, std::chrono::steady_clock::now());
  EXPECT_GE(count, 3) << notify.Dump();
  EXPECT_LT(gap, 1500) << notify.Dump();
  for (const NotifySocket::Message& m : notify.Messages()) {
    EXPECT_EQ(m.pid, w.pid()) << "sent by another process (NotifyAccess=main): " << m.text;
  }
  EXPECT_EQ(notify.With("READY=1").size(), 1u) << notify.Dump();
  const auto ready_msg = notify.With("READY=1").at(0);
  EXPECT_NE(ready_msg.text.find("STATUS=worker "), std::string::npos) << ready_msg.text;
  EXPECT_FALSE(notify.Has("STOPPING=1")) << notify.Dump();

  // SIGTERM mid-job: STOPPING=1 at once, the job finishes (the drain), exit 0.
  const int64_t slow = Add(Job("log start; sleep 1; log done"));
  ASSERT_TRUE(WaitFor([&] { return LedgerHas(slow, 1, "start"); })) << w.Log();
  const SteadyTime term = std::chrono::steady_clock::now();
  ASSERT_TRUE(w.proc->Signal(SIGTERM));
  ASSERT_TRUE(WaitFor([&] { return notify.Has("STOPPING=1"); })) << notify.Dump();
  EXPECT_LT(MillisSince(term), 1000 * 2) << "STOPPING=1 came after the drain, not at its start";
  EXPECT_FALSE(LedgerHas(slow, 1, "done")) << "STOPPING=1 came after the drain";
  ASSERT_TRUE(w.proc->WaitExit(kDeadline)) << w.Log();
  EXPECT_EQ(w.proc->ExitCode(), 0) << w.Log();
  EXPECT_TRUE(LedgerHas(slow, 1, "done"));
  EXPECT_EQ(notify.With("STOPPING=1").size(), 1u) << notify.Dump();
  EXPECT_EQ(notify.With("READY=1").size(), 1u) << notify.Dump();
}

// Another session's lock that every write waits on for 4 s: heartbeats and
// claims stall, the worker is not ready (and says so in STATUS=), and it
// keeps feeding the watchdog, for it is doing what it should.
TEST_P(SystemdNotifyTest, WorkerFeedsTheWatchdogWhileItsDatabaseRefusesWrites) {
  NotifySocket notify(dir() + "/notify");
  Worker& w = StartWorker("sd", FastFlags(), 2, /*wait_started=*/false,
                          Systemd(notify.path(), kWatchdogUsec));
  ASSERT_TRUE(WaitFor([&] { return notify.Has("READY=1") || w.proc->Exited(); }))
      << w.Log() << notify.Dump();
  DatabaseLock lock(postgres(), db(), Millis(4000));
  ASSERT_TRUE(lock.WaitHeld());
  const SteadyTime held = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return lock.released(); }, Millis(30'000)));
  const SteadyTime released = std::chrono::steady_clock::now();
  const auto [count, gap] = Pings(notify, held, released);
  EXPECT_GE(count, 5) << notify.Dump();
  EXPECT_LT(gap, 1500) << notify.Dump();
  EXPECT_FALSE(w.proc->Exited()) << w.Log();
  // It says, in STATUS=, that it is not ready meanwhile.
  bool said = false;
  for (const NotifySocket::Message& m : notify.Messages()) {
    said = said || (m.at >= held && m.at < released + Millis(500) &&
                    m.text.find("not ready") != std::string::npos);
  }
  EXPECT_TRUE(said) << notify.Dump();
  const int64_t id = Add(Job("log ran"));
  ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); })) << w.Log();
}

// What systemd would never send, or a manager that went away: the worker
// runs as without it. WATCHDOG_PID of another process: the watchdog is not
// its own (sd_watchdog_enabled), so it sends READY=1 but no ping.
// What a process tells systemd does not depend on the backend: one is enough.
class SystemdNotifyOneBackendTest : public SystemdNotifyTest {};

TEST_P(SystemdNotifyOneBackendTest, WorkerRunsAsUsualWithABadNotifySocketOrAnotherPidsWatchdog) {
  for (const std::string& socket : {dir() + "/nobody-listens", std::string("@"),
                                    std::string("not-a-path")}) {
    SCOPED_TRACE(socket);
    Worker& w = StartWorker("bad-" + std::to_string(socket.size()), FastFlags(), 2,
                            /*wait_started=*/true, Systemd(socket, kWatchdogUsec));
    const int64_t id = Add(Job("log ran"));
    ASSERT_TRUE(WaitFor([&] { return JobInState(id, JobState::kSucceeded); })) << w.Log();
    ASSERT_TRUE(w.proc->Signal(SIGTERM));
    ASSERT_TRUE(w.proc->WaitExit(kDeadline)) << w.Log();
    EXPECT_EQ(w.proc->ExitCode(), 0) << w.Log();
  }
  NotifySocket notify(dir() + "/notify");
  for (const std::string& usec : {std::string("abc"), std::string("")}) {
    SCOPED_TRACE("WATCHDOG_USEC=" + usec);
    std::vector<std::string> wrapper = Systemd(notify.path(), 0);
    wrapper[2] = "WATCHDOG_USEC=" + usec;
    Worker& w = StartWorker("usec-" + std::to_string(usec.size()), FastFlags(), 2,
                            /*wait_started=*/true, wrapper);
    ASSERT_TRUE(WaitFor([&] { return notify.Has("READY=1"); })) << notify.Dump();
    ASSERT_TRUE(w.proc->Signal(SIGTERM));
    ASSERT_TRUE(w.proc->WaitExit(kDeadline)) << w.Log();
    EXPECT_EQ(w.proc->ExitCode(), 0) << w.Log();
  }
  Worker& other = StartWorker("other-pid", FastFlags(), 2, /*wait_started=*/true,
                              Systemd(notify.path(), kWatchdogUsec, "1"));
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& m : notify.With("READY=1")) {
      if (m.pid == other.pid()) return true;
    }
    return false;
  })) << notify.Dump();
  // Watched for three would-be ping intervals.
  EXPECT_TRUE(StaysTrueFor(
      [&] {
        for (const auto& m : notify.With("WATCHDOG=1")) {
          if (m.pid == other.pid()) return false;
        }
        return true;
      },
      Millis(1500)))
      << notify.Dump();
  for (const auto& m : notify.With("WATCHDOG=1")) EXPECT_NE(m.pid, other.pid()) << m.text;
}

// `warden serve`: READY=1 once it listens (a request then succeeds),
// WATCHDOG=1 while it runs, STOPPING=1 at SIGTERM, exit 0.
TEST_P(SystemdNotifyOneBackendTest, ServeIsReadyWhenItListensFeedsTheWatchdogAndSaysStopping) {
  NotifySocket notify(dir() + "/notify");
  std::vector<std::string> argv = Systemd(notify.path(), kWatchdogUsec);
  for (const std::string& a : {std::string(WARDEN_BIN), std::string("--db"), db(),
                               std::string("serve"), std::string("--listen"),
                               std::string("127.0.0.1:0"), std::string("--no-auth")}) {
    argv.push_back(a);
  }
  auto serve = Child::Spawn(argv, dir() + "/serve.out", dir() + "/serve.err");
  ASSERT_TRUE(WaitFor([&] { return notify.Has("READY=1") || serve->Exited(); }))
      << serve->Stderr() << notify.Dump();
  const SteadyTime ready = std::chrono::steady_clock::now();
  const std::string log = serve->Stderr();
  const size_t at = log.find("serving on 127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << "READY=1 before the port was known: " << log;
  const int port = std::atoi(log.c_str() + at + 21);
  const auto r = warden::testing::RunToExit(
      {"/usr/bin/curl", "-sS", "-f", "http://127.0.0.1:" + std::to_string(port) + "/v1/stats"},
      dir() + "/curl", Millis(30'000));
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(notify.With("READY=1").at(0).text.find("STATUS=serving on 127.0.0.1:"),
            std::string::npos)
      << notify.Dump();
  // A stimulus: the pings are counted over this time.
  std::this_thread::sleep_for(Millis(2500));
  const auto [count, gap] = Pings(notify, ready, std::chrono::steady_clock::now());
  EXPECT_GE(count, 3) << notify.Dump();
  EXPECT_LT(gap, 1500) << notify.Dump();
  ASSERT_TRUE(serve->Signal(SIGTERM));
  ASSERT_TRUE(serve->WaitExit(kDeadline)) << serve->Stderr();
  EXPECT_EQ(serve->ExitCode(), 0) << serve->Stderr();
  EXPECT_EQ(notify.With("STOPPING=1").size(), 1u) << notify.Dump();
  for (const NotifySocket::Message& m : notify.Messages()) {
    EXPECT_EQ(m.pid, serve->pid()) << m.text;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SystemdNotifyTest, ::testing::ValuesIn(AllBackends()),
                         BackendName);
INSTANTIATE_TEST_SUITE_P(Sqlite, SystemdNotifyOneBackendTest, ::testing::Values(Backend::kSqlite),
                         BackendName);

}  // namespace
}  // namespace wt
