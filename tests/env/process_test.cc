#include "env/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

namespace warden {
namespace {

// A forked child that blocks until the test closes `release`, then exits.
// Optionally renames itself first (before reporting ready).
struct Child {
  pid_t pid = -1;
  int release_fd = -1;  // close to let the child exit
};

Child ForkChild(const char* comm = nullptr) {
  int ready[2];
  int release[2];
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(release, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2";
    return {};
  }
  pid_t pid = fork();
  if (pid == 0) {
    // Hold no other child's release pipe, or that child would never exit.
    for (int fd = 3; fd < 1024; ++fd) {
      if (fd != ready[1] && fd != release[0]) close(fd);
    }
    if (comm != nullptr) prctl(PR_SET_NAME, comm, 0, 0, 0);
    char c = 'r';
    (void)!write(ready[1], &c, 1);
    (void)!read(release[0], &c, 1);  // EOF when the parent closes it
    _exit(0);
  }
  close(ready[1]);
  close(release[0]);
  char c;
  EXPECT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  return {pid, release[1]};
}

TEST(ProcessTest, HostAndBoot) {
  EXPECT_FALSE(HostName().empty());
  std::string boot = BootId();
  EXPECT_FALSE(boot.empty());
  EXPECT_EQ(boot.find_first_of(" \n\t"), std::string::npos);
  EXPECT_EQ(boot, BootId());
}

TEST(ProcessTest, OwnProcessIsAlive) {
  int64_t start = ProcessStartTime(getpid());
  ASSERT_GE(start, 0);
  EXPECT_EQ(start, ProcessStartTime(getpid()));
  EXPECT_TRUE(ProcessAlive(getpid(), start));
}

TEST(ProcessTest, WrongStartTimeIsDead) {
  int64_t start = ProcessStartTime(getpid());
  ASSERT_GE(start, 0);
  EXPECT_FALSE(ProcessAlive(getpid(), start + 1));
  EXPECT_FALSE(ProcessAlive(getpid(), -1));
}

TEST(ProcessTest, NoSuchProcess) {
  EXPECT_EQ(ProcessStartTime(0), -1);
  EXPECT_EQ(ProcessStartTime(-5), -1);
  EXPECT_FALSE(ProcessAlive(0, 0));
  EXPECT_FALSE(ProcessAlive(-5, 0));
}

TEST(ProcessTest, ReapedChildIsDead) {
  Child child = ForkChild();
  ASSERT_GT(child.pid, 0);
  int64_t start = ProcessStartTime(child.pid);
  ASSERT_GE(start, 0);
  EXPECT_TRUE(ProcessAlive(child.pid, start));
  close(child.release_fd);
  int status = 0;
  ASSERT_EQ(waitpid(child.pid, &status, 0), child.pid);
  // The pid may already be reused by now; either way this process is gone.
  EXPECT_FALSE(ProcessAlive(child.pid, start));
}

TEST(ProcessTest, ZombieIsDead) {
  Child child = ForkChild();
  ASSERT_GT(child.pid, 0);
  int64_t start = ProcessStartTime(child.pid);
  ASSERT_GE(start, 0);
  close(child.release_fd);
  // Wait for the exit without reaping, so the child stays a zombie.
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, child.pid, &info, WEXITED | WNOWAIT), 0);
  EXPECT_EQ(ProcessStartTime(child.pid), start);  // zombies keep their stat
  EXPECT_FALSE(ProcessAlive(child.pid, start));
  int status = 0;
  ASSERT_EQ(waitpid(child.pid, &status, 0), child.pid);
}

TEST(ProcessTest, CommWithParenthesesAndSpaces) {
  // A naive parser splitting after the first ')' would read state 'Z' and a
  // wrong start time.
  Child plain = ForkChild();
  Child tricky = ForkChild(") Z 1 2 3 4 5");
  ASSERT_GT(plain.pid, 0);
  ASSERT_GT(tricky.pid, 0);
  int64_t start = ProcessStartTime(tricky.pid);
  EXPECT_GT(start, 0);
  // Both were forked moments apart: start times are close (ticks, 100/s).
  EXPECT_LE(std::abs(start - ProcessStartTime(plain.pid)), 100 * 60);
  EXPECT_TRUE(ProcessAlive(tricky.pid, start));
  for (Child* c : {&plain, &tricky}) {
    close(c->release_fd);
    int status = 0;
    EXPECT_EQ(waitpid(c->pid, &status, 0), c->pid);
  }
}

}  // namespace
}  // namespace warden
