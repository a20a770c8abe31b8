// DeathWatch with real processes and pidfds: a watched worker's exit is seen
// at once; a worker in another pid namespace of this host is not watched
// (its pid means nothing here), so it never makes the sweeper spin.
#include "maintenance/death_watch.h"

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "env/process.h"
#include "maintenance/sweeper.h"

namespace warden {
namespace {

class DeathWatchTest : public testing::Test {
 protected:
  void SetUp() override { wake_ = eventfd(0, EFD_CLOEXEC); }
  void TearDown() override { close(wake_); }

  WorkerLiveness Child(pid_t pid) {
    WorkerLiveness w;
    w.id = 7;
    w.host = DefaultEnv().Host().node;
    w.pid_ns = DefaultEnv().Host().pid_ns;
    w.pid = pid;
    w.pid_start = ProcessStartTime(pid);
    return w;
  }

  int wake_ = -1;
};

TEST_F(DeathWatchTest, SeesAWatchedProcessExitAtOnce) {
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  ASSERT_GT(child, 0);
  DeathWatch watch(DefaultEnv());
  watch.Set({Child(child)});
  EXPECT_FALSE(watch.Wait(Millis(50), wake_)) << "alive: nothing to see";
  kill(child, SIGKILL);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(watch.Wait(Millis(10'000), wake_));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  waitpid(child, nullptr, 0);
}

TEST_F(DeathWatchTest, AGoneProcessIsReportedAtOnce) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  WorkerLiveness w = Child(child);
  waitpid(child, nullptr, 0);
  DeathWatch watch(DefaultEnv());
  watch.Set({w});
  EXPECT_TRUE(watch.Wait(Millis(10'000), wake_));
}

TEST_F(DeathWatchTest, IgnoresAWorkerInAnotherPidNamespace) {
  // Its pid names no process of ours (or another one): watching it would
  // report it gone on every pass.
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  WorkerLiveness w = Child(child);
  waitpid(child, nullptr, 0);
  w.pid_ns = "pid:[1]";
  DeathWatch watch(DefaultEnv());
  watch.Set({w});
  EXPECT_FALSE(watch.Wait(Millis(100), wake_));
  EXPECT_FALSE(watch.Wait(Millis(100), wake_));
}

}  // namespace
}  // namespace warden
