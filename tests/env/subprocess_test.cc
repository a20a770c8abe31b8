#include "env/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "env/process.h"
#include "wait_for.h"

namespace warden {
namespace {

using std::chrono::steady_clock;

// Generous: the suite must pass on a loaded 2-core machine.
constexpr Millis kBound = testing::kDeadline;

using testing::Gone;
using testing::Identify;
using testing::WaitFor;
// A process named by (pid, start time), so pid reuse cannot fool a check.
using Proc = testing::ProcId;

// Each test runs twice: the shim started as its own program (warden-shim,
// as `warden worker` starts it), and forked from this process (a worker
// that finds no warden-shim).
std::string shim_path;  // this run's SubprocessSpec::shim_path

class SubprocessTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { shim_path = GetParam() ? WARDEN_TEST_SHIM_PROGRAM : ""; }
};

INSTANTIATE_TEST_SUITE_P(Spawn, SubprocessTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "program" : "fork";
                         });

SubprocessResult RunSpec(SubprocessSpec spec, StopSignal& stop,
                     const std::function<void(const std::string&)>& on_line) {
  spec.shim_path = shim_path;
  return RunSubprocess(spec, stop, on_line);
}

SubprocessResult RunCommand(const std::string& command,
                            SubprocessSpec spec = {},
                            std::vector<std::string>* lines = nullptr) {
  spec.command = command;
  StopSignal stop;
  return RunSpec(spec, stop, [lines](const std::string& line) {
    if (lines != nullptr) lines->push_back(line);
  });
}

std::vector<int> ParseInts(const std::string& line) {
  std::istringstream in(line);
  std::vector<int> out;
  for (int v; in >> v;) out.push_back(v);
  return out;
}

TEST_P(SubprocessTest, ExitCodes) {
  SubprocessResult ok = RunCommand("exit 0");
  EXPECT_TRUE(ok.started) << ok.spawn_error;
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_FALSE(ok.signal.has_value());
  EXPECT_FALSE(ok.timed_out);
  EXPECT_EQ(ok.stopped, StopReason::kNone);
  EXPECT_TRUE(ok.spawn_error.empty());

  SubprocessResult bad = RunCommand("echo out; echo err >&2; exit 42");
  EXPECT_TRUE(bad.started);
  EXPECT_EQ(bad.exit_code, 42);
  EXPECT_EQ(bad.stdout_tail, "out\n");
  EXPECT_EQ(bad.stderr_tail, "err\n");
}

TEST_P(SubprocessTest, MissingCommandExits127) {
  SubprocessResult r = RunCommand("/nonexistent/warden-no-such-command");
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 127);
}

int64_t BoottimeMs() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1'000'000;
}

// The job's own process checks the start deadline just before exec: past
// it, nothing of the command runs.
TEST_P(SubprocessTest, PastStartDeadlineRunsNothing) {
  char dir[] = "/tmp/warden-deadline-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string mark = std::string(dir) + "/ran";
  SubprocessSpec spec;
  spec.start_by_mono_ms = BoottimeMs() - 1;
  SubprocessResult r = RunCommand("touch '" + mark + "'", spec);
  EXPECT_FALSE(r.started);
  EXPECT_TRUE(r.missed_start_deadline);
  EXPECT_FALSE(r.exit_code.has_value());
  EXPECT_NE(access(mark.c_str(), F_OK), 0) << "the command ran";

  spec.start_by_mono_ms = BoottimeMs() + 60'000;
  r = RunCommand("touch '" + mark + "'", spec);
  EXPECT_TRUE(r.started) << r.spawn_error;
  EXPECT_FALSE(r.missed_start_deadline);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(access(mark.c_str(), F_OK), 0);
  unlink(mark.c_str());
  rmdir(dir);
}

// The payload is a file the job reads by itself: seekable, read in full
// however large, without the supervisor's help.
TEST_P(SubprocessTest, StdinIsAFileHoldingThePayload) {
  SubprocessSpec spec;
  spec.stdin_data = std::string(300 * 1024, 'p');
  SubprocessResult r = RunCommand("test -f /dev/stdin && wc -c", spec);
  EXPECT_EQ(r.exit_code, 0) << r.stderr_tail;
  EXPECT_EQ(std::stoi(r.stdout_tail), 300 * 1024);
}

TEST_P(SubprocessTest, StdinReachesJob) {
  SubprocessSpec spec;
  spec.stdin_data = "hello\nworld\n";
  SubprocessResult r = RunCommand("cat", spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_tail, "hello\nworld\n");
}

TEST_P(SubprocessTest, LargeStdinDeliveredWhole) {
  SubprocessSpec spec;
  spec.stdin_data = std::string(1 << 20, 'q');
  SubprocessResult r = RunCommand("wc -c", spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(std::stoi(r.stdout_tail), 1 << 20);
}

TEST_P(SubprocessTest, UnreadStdinDoesNotHang) {
  SubprocessSpec spec;
  spec.stdin_data = std::string(1 << 20, 'q');
  spec.timeout = Millis(60000);
  SubprocessResult r = RunCommand("exit 3", spec);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);

  // Reads a little, then exits with most of the payload unwritten.
  r = RunCommand("head -c 10 >/dev/null; exit 4", spec);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_FALSE(r.timed_out);
}

TEST_P(SubprocessTest, EnvironmentVisible) {
  SubprocessSpec spec;
  spec.env = {{"WARDEN_TEST_VAR", "a b"}, {"HOME", "/nowhere"}};
  SubprocessResult r = RunCommand(
      "printf '%s|%s|%s' \"$WARDEN_TEST_VAR\" \"$HOME\" "
      "\"$WARDEN_CONTROL_FD\"",
      spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_tail, "a b|/nowhere|3");
}

TEST_P(SubprocessTest, InvalidEnvironmentNameRejected) {
  SubprocessSpec spec;
  spec.env = {{"A=B", "x"}};
  SubprocessResult r = RunCommand("exit 0", spec);
  EXPECT_FALSE(r.started);
  EXPECT_FALSE(r.spawn_error.empty());
}

TEST_P(SubprocessTest, TailsKeepOnlyTheEnd) {
  SubprocessSpec spec;
  spec.tail_bytes = 100;
  SubprocessResult r = RunCommand(
      "head -c 5000000 /dev/zero | tr '\\0' x >&2; printf END >&2; "
      "head -c 3000000 /dev/zero | tr '\\0' y; printf FIN",
      spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stderr_tail, std::string(97, 'x') + "END");
  EXPECT_EQ(r.stdout_tail, std::string(97, 'y') + "FIN");
}

TEST_P(SubprocessTest, KilledBySignal) {
  SubprocessResult r = RunCommand("ulimit -c 0; kill -SEGV $$");
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.exit_code.has_value());
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_FALSE(r.timed_out);
}

TEST_P(SubprocessTest, TimeoutSendsTerm) {
  SubprocessSpec spec;
  spec.timeout = Millis(200);
  spec.kill_grace = Millis(60000);
  SubprocessResult r = RunCommand("sleep 60", spec);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_GE(r.elapsed, Millis(200));
  EXPECT_LT(r.elapsed, kBound);
}

TEST_P(SubprocessTest, TimeoutEscalatesToKillAfterGrace) {
  // Valid only if the shell installed its trap before the timeout fired; a
  // loaded machine may start it late, so retry with longer timeouts.
  for (Millis timeout : {Millis(300), Millis(2000), Millis(8000)}) {
    SubprocessSpec spec;
    spec.command = "trap '' TERM; echo trapped >&3; sleep 60";
    spec.timeout = timeout;
    spec.kill_grace = Millis(300);
    StopSignal stop;
    const auto t0 = steady_clock::now();
    bool trapped_in_time = false;
    SubprocessResult r = RunSpec(spec, stop, [&](const std::string&) {
      trapped_in_time = steady_clock::now() < t0 + timeout;
    });
    if (!trapped_in_time) continue;
    EXPECT_TRUE(r.timed_out);
    EXPECT_EQ(r.stopped, StopReason::kNone);
    EXPECT_EQ(r.signal, SIGKILL);
    EXPECT_GE(r.elapsed, timeout + spec.kill_grace);
    EXPECT_LT(r.elapsed, timeout + kBound);
    return;
  }
  FAIL() << "the shell never installed its trap before the timeout";
}

TEST_P(SubprocessTest, StopEscalatesToKillAfterGrace) {
  StopSignal stop;
  SubprocessSpec spec;
  spec.command = "trap '' TERM; echo trapped >&3; sleep 60";
  spec.kill_grace = Millis(300);
  SubprocessResult r = RunSpec(spec, stop, [&](const std::string&) {
    stop.Request(StopReason::kShutdown);
  });
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.stopped, StopReason::kShutdown);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_GE(r.elapsed, spec.kill_grace);
  EXPECT_LT(r.elapsed, kBound);
}

TEST_P(SubprocessTest, StopImmediatelyAfterSpawnIsNotLost) {
  // A stop that lands before the job has even exec'd must still stop it.
  for (int i = 0; i < 20; ++i) {
    SubprocessSpec spec;
    spec.timeout = Millis(0);
    spec.kill_grace = Millis(60000);
    SubprocessResult r = RunCommand("sleep 60", spec);
    EXPECT_TRUE(r.timed_out);
    EXPECT_EQ(r.signal, SIGTERM);
    EXPECT_LT(r.elapsed, kBound);
  }
}

TEST_P(SubprocessTest, StopSignalFromAnotherThread) {
  StopSignal stop;
  SubprocessSpec spec;
  spec.command = "echo ready >&3; sleep 60";
  std::atomic<bool> ready{false};
  SubprocessResult r;
  std::thread runner([&] {
    r = RunSpec(spec, stop, [&](const std::string& line) {
      if (line == "ready") ready = true;
    });
  });
  ASSERT_TRUE(WaitFor([&] { return ready.load(); }));
  stop.Request(StopReason::kCancel);
  stop.Request(StopReason::kShutdown);  // the first reason wins
  runner.join();
  EXPECT_EQ(r.stopped, StopReason::kCancel);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_LT(r.elapsed, kBound);
}

TEST_P(SubprocessTest, StopRequestedBeforeStartSpawnsNothing) {
  StopSignal stop;
  stop.Request(StopReason::kShutdown);
  EXPECT_TRUE(stop.requested());
  SubprocessSpec spec;
  spec.command = "exit 0";
  SubprocessResult r = RunSpec(spec, stop, nullptr);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.stopped, StopReason::kShutdown);
}

TEST_P(SubprocessTest, StopKillsTheWholeGroup) {
  StopSignal stop;
  SubprocessSpec spec;
  spec.command = "sleep 60 & echo $! >&3; wait";
  Proc sleeper;
  SubprocessResult r = RunSpec(spec, stop, [&](const std::string& l) {
    sleeper = Identify(std::stoi(l));
    EXPECT_FALSE(Gone(sleeper));
    stop.Request(StopReason::kFence);
  });
  EXPECT_EQ(r.stopped, StopReason::kFence);
  ASSERT_GT(sleeper.pid, 0);
  EXPECT_TRUE(WaitFor([&] { return Gone(sleeper); }));
}

TEST_P(SubprocessTest, LeftoversKilledWhenJobExits) {
  std::vector<std::string> lines;
  SubprocessResult r =
      RunCommand("sleep 60 >/dev/null 2>&1 & echo $! >&3; exit 5", {}, &lines);
  EXPECT_EQ(r.exit_code, 5);
  ASSERT_EQ(lines.size(), 1u);
  // Identified after the fact; a dead or reused pid reads as not alive.
  Proc sleeper = Identify(std::stoi(lines[0]));
  EXPECT_TRUE(WaitFor([&] { return Gone(sleeper); }));
}

TEST_P(SubprocessTest, ControlLinesInOrder) {
  std::vector<std::string> lines;
  SubprocessResult r = RunCommand(
      "i=0; while [ $i -lt 1000 ]; do echo \"line $i\" >&3; i=$((i+1)); "
      "done; printf partial >&3",
      {}, &lines);
  EXPECT_EQ(r.exit_code, 0);
  ASSERT_EQ(lines.size(), 1000u);
  for (int i = 0; i < 1000; ++i)
    EXPECT_EQ(lines[i], "line " + std::to_string(i));
}

TEST_P(SubprocessTest, OverlongControlLineDropped) {
  std::vector<std::string> lines;
  SubprocessResult r = RunCommand(
      "head -c 1048576 /dev/zero | tr '\\0' a >&3; echo >&3; "
      "head -c 1100000 /dev/zero | tr '\\0' b >&3; echo >&3; "
      "echo after >&3",
      {}, &lines);
  EXPECT_EQ(r.exit_code, 0);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], std::string(kMaxControlLine, 'a'));
  EXPECT_EQ(lines[1], "after");
  EXPECT_NE(r.stderr_tail.find("dropped a control line"), std::string::npos);
}

TEST_P(SubprocessTest, OnlyStdioAndControlFdReachTheJob) {
  // A non-CLOEXEC fd in the worker must not leak into the job.
  int devnull = open("/dev/null", O_RDONLY);
  ASSERT_GE(devnull, 0);
  ASSERT_EQ(dup2(devnull, 200), 200);
  close(devnull);
  // `[ -h ]` is an lstat in the shell itself: listing opens no fd.
  SubprocessResult r = RunCommand(
      "i=0; while [ $i -le 300 ]; do [ -h /proc/$$/fd/$i ] && echo $i; "
      "i=$((i+1)); done; exit 0");
  close(200);
  EXPECT_EQ(r.exit_code, 0);
  std::set<int> fds;
  std::istringstream in(r.stdout_tail);
  for (int fd; in >> fd;) fds.insert(fd);
  for (int fd : {0, 1, 2, 3}) EXPECT_EQ(fds.count(fd), 1u) << fd;
  // Nothing of ours (4 was the exec-error pipe; 200 is not CLOEXEC). The
  // shell may hold one fd of its own (dash keeps 10).
  for (int fd : {4, 5, 6, 7, 8, 9, 200}) EXPECT_EQ(fds.count(fd), 0u) << fd;
  EXPECT_LE(fds.size(), 5u) << r.stdout_tail;
}

TEST_P(SubprocessTest, ConcurrentJobsStaySeparate) {
  constexpr int kJobs = 8;
  std::vector<SubprocessResult> results(kJobs);
  std::vector<std::vector<std::string>> lines(kJobs);
  std::vector<std::thread> threads;
  for (int i = 0; i < kJobs; ++i) {
    threads.emplace_back([&, i] {
      SubprocessSpec spec;
      spec.command = "echo \"$JOB\" >&3; cat";
      spec.env = {{"JOB", std::to_string(i)}};
      spec.stdin_data = std::string(200000, static_cast<char>('a' + i));
      spec.tail_bytes = 1 << 20;
      StopSignal stop;
      results[i] = RunSpec(
          spec, stop, [&, i](const std::string& l) { lines[i].push_back(l); });
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kJobs; ++i) {
    EXPECT_EQ(results[i].exit_code, 0) << results[i].spawn_error;
    EXPECT_EQ(results[i].stdout_tail,
              std::string(200000, static_cast<char>('a' + i)));
    EXPECT_EQ(lines[i], std::vector<std::string>{std::to_string(i)});
  }
}

TEST_P(SubprocessTest, ShimDeathKillsJobAndIsReported) {
  StopSignal stop;
  SubprocessSpec spec;
  spec.command = "sleep 60 & echo $PPID $$ $! >&3; wait";
  Proc shell, sleeper;
  SubprocessResult r = RunSpec(spec, stop, [&](const std::string& l) {
    std::vector<int> pids = ParseInts(l);
    ASSERT_EQ(pids.size(), 3u);
    shell = Identify(pids[1]);
    sleeper = Identify(pids[2]);
    // The shim is the program when one was given, else a fork of this test.
    EXPECT_EQ(GetParam(), proc::ReadFile("/proc/" + std::to_string(pids[0]) + "/comm") ==
                              "warden-shim\n");
    kill(pids[0], SIGKILL);  // the shim
  });
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_NE(r.spawn_error.find("shim died"), std::string::npos)
      << r.spawn_error;
  ASSERT_GT(sleeper.pid, 0);
  EXPECT_TRUE(WaitFor([&] { return Gone(shell) && Gone(sleeper); }));
}

// Reads one '\n'-terminated line from fd within `bound`; "" on timeout/EOF.
std::string ReadLine(int fd, Millis bound) {
  std::string line;
  auto deadline = steady_clock::now() + bound;
  for (;;) {
    auto left =
        std::chrono::duration_cast<Millis>(deadline - steady_clock::now());
    if (left.count() <= 0) return "";
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char c;
    ssize_t n = read(fd, &c, 1);
    if (n <= 0) return "";
    if (c == '\n') return line;
    line += c;
  }
}

// Forks a "worker" running `sleep 300 & ...; wait` as a job, SIGKILLs it
// (or its whole process group), and checks the job's shell and its
// background child are gone within a bounded wait.
void ExpectWorkerDeathKillsJob(bool kill_worker_group) {
  int report[2];
  ASSERT_EQ(pipe2(report, O_CLOEXEC), 0);
  pid_t worker = fork();
  ASSERT_GE(worker, 0);
  if (worker == 0) {
    if (kill_worker_group) setpgid(0, 0);
    close(report[0]);
    StopSignal stop;
    SubprocessSpec spec;
    spec.command = "sleep 300 & echo $$ $! >&3; wait";
    RunSpec(spec, stop, [&](const std::string& line) {
      std::string out = line + "\n";
      (void)!write(report[1], out.data(), out.size());
    });
    _exit(0);
  }
  close(report[1]);
  std::vector<int> pids = ParseInts(ReadLine(report[0], kBound));
  close(report[0]);
  if (pids.size() != 2) {
    kill(worker, SIGKILL);
    waitpid(worker, nullptr, 0);
    FAIL() << "no pids reported by the job";
  }
  Proc shell = Identify(pids[0]);
  Proc sleeper = Identify(pids[1]);
  EXPECT_FALSE(Gone(shell));
  EXPECT_FALSE(Gone(sleeper));

  // The shim is in a process group of its own, so even a kill of the
  // worker's whole group leaves it to clean up.
  ASSERT_EQ(kill(kill_worker_group ? -worker : worker, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(worker, &status, 0), worker);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(WaitFor([&] { return Gone(shell) && Gone(sleeper); },
                      Millis(10000)));
}

TEST_P(SubprocessTest, WorkerDeathKillsJobAndDescendants) {
  ExpectWorkerDeathKillsJob(false);
}

TEST_P(SubprocessTest, WorkerGroupKillStillKillsJob) {
  ExpectWorkerDeathKillsJob(true);
}

}  // namespace
}  // namespace warden
