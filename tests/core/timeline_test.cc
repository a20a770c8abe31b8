// BuildTimeline: every attempt's claim with its worker incarnation, how it
// ended, how a loss was found, when the job could run again, and the late
// writes fencing refused, each under the attempt whose lease it carried.
#include <gtest/gtest.h>

#include <algorithm>

#include "warden/timeline.h"

namespace warden {
namespace {

constexpr TimeMs kT = 1'800'000'000'000;

WorkerInfo Worker(WorkerId id, const std::string& name, int pid) {
  WorkerInfo w;
  w.id = id;
  w.name = name;
  w.node = "host-a";
  w.pid = pid;
  w.started_at = kT - 60'000;
  return w;
}

AttemptError Error(ErrorKind kind, const std::string& message,
                   std::optional<int> signal = std::nullopt) {
  AttemptError e;
  e.kind = kind;
  e.message = message;
  e.signal = signal;
  return e;
}

AttemptInfo Attempt(int n, WorkerId worker, int64_t token, TimeMs claimed) {
  AttemptInfo a;
  a.attempt = n;
  a.worker = worker;
  a.lease_token = token;
  a.claimed_at = claimed;
  return a;
}

// Killed on worker 5, proven dead 40 ms later, run again on worker 6; the
// frozen-then-resumed worker 5 writes late and is refused.
JobInfo RescuedJob() {
  JobInfo j;
  j.id = 12;
  j.queue = "email";
  j.task = "send";
  j.state = JobState::kSucceeded;
  j.created_at = kT;
  AttemptInfo lost = Attempt(1, 5, 7, kT + 10);
  lost.worker_name = "w1";
  lost.finished_at = kT + 50;
  lost.outcome = "lost";
  lost.error = Error(ErrorKind::kLost, "worker 5 is dead: process 123 on host-a is gone");
  lost.lost_by = "proven_death";
  lost.runnable_at = kT + 50;
  AttemptInfo ok = Attempt(2, 6, 8, kT + 52);
  ok.worker_name = "w2";
  ok.finished_at = kT + 80;
  ok.outcome = "succeeded";
  j.attempts = {lost, ok};
  return j;
}

std::vector<std::string> Kinds(const JobTimeline& t) {
  std::vector<std::string> out;
  for (const TimelineEvent& e : t.events) out.push_back(e.kind);
  return out;
}

const TimelineEvent* Find(const JobTimeline& t, const std::string& kind, int attempt) {
  for (const TimelineEvent& e : t.events) {
    if (e.kind == kind && e.attempt == attempt) return &e;
  }
  return nullptr;
}

TEST(TimelineTest, ARescueReadsInOrderWithItsEvidence) {
  std::vector<FencedWriteInfo> fenced = {{kT + 90, 5, "w1", 7, "complete"}};
  const JobTimeline t =
      BuildTimeline(RescuedJob(), fenced, {Worker(5, "w1", 123), Worker(6, "w2", 456)});
  EXPECT_EQ(Kinds(t), (std::vector<std::string>{"enqueued", "claimed", "lost", "runnable",
                                                "claimed", "succeeded", "fenced_write"}));
  const TimelineEvent* claim = Find(t, "claimed", 1);
  ASSERT_NE(claim, nullptr);
  EXPECT_EQ(claim->text, "attempt 1 claimed by w1 (worker 5, pid 123 on host-a), lease token 7");
  EXPECT_EQ(claim->evidence["pid"], 123);
  EXPECT_EQ(claim->evidence["lease_token"], 7);
  const TimelineEvent* lost = Find(t, "lost", 1);
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->evidence["lost_by"], "proven_death");
  EXPECT_NE(lost->text.find("proven dead"), std::string::npos) << lost->text;
  EXPECT_NE(lost->text.find("process 123 on host-a is gone"), std::string::npos);
  const TimelineEvent* again = Find(t, "runnable", 1);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->text, "runnable again at once");
  const TimelineEvent* late = Find(t, "fenced_write", 1);
  ASSERT_NE(late, nullptr) << "the late write belongs to the attempt whose lease it carried";
  EXPECT_EQ(late->evidence["what"], "complete");
  EXPECT_EQ(late->evidence["lease_token"], 7);
  EXPECT_EQ(t.fenced.size(), 1u);
}

TEST(TimelineTest, APrunedWorkerIsNamedByIdAndALossWithoutACauseSaysSo) {
  JobInfo j = RescuedJob();
  j.attempts[0].lost_by.clear();  // lost before the cause was recorded
  j.attempts[0].worker_name.clear();
  const JobTimeline t = BuildTimeline(j, {}, {});
  EXPECT_EQ(Find(t, "claimed", 1)->text, "attempt 1 claimed by worker 5, lease token 7");
  EXPECT_TRUE(Find(t, "lost", 1)->evidence["lost_by"].is_null());
  EXPECT_NE(Find(t, "lost", 1)->text.find("not recorded"), std::string::npos);
}

TEST(TimelineTest, ABackoffAndAVerdictAreShown) {
  JobInfo j;
  j.id = 3;
  j.queue = "q";
  j.task = "t";
  j.state = JobState::kDead;
  j.last_error = ErrorKind::kCrashLoop;
  j.charged = j.crashes = j.max_crashes = 2;
  j.max_attempts = 5;
  j.created_at = kT;
  j.finished_at = kT + 5'000;
  AttemptInfo crash = Attempt(1, 5, 1, kT + 1);
  crash.finished_at = kT + 2;
  crash.outcome = "crash";
  crash.error = Error(ErrorKind::kCrash, "killed", 9);
  crash.runnable_at = kT + 2 + 1'500;
  AttemptInfo last = Attempt(2, 5, 2, kT + 4'000);
  last.finished_at = kT + 5'000;
  last.outcome = "crash";
  last.error = Error(ErrorKind::kCrash, "killed", 9);
  j.attempts = {crash, last};
  const JobTimeline t = BuildTimeline(j, {}, {});
  EXPECT_EQ(Find(t, "failed", 1)->text, "attempt 1 failed: crash (signal 9): killed");
  EXPECT_EQ(Find(t, "runnable", 1)->text, "runnable again after a backoff of 1.5s");
  EXPECT_EQ(Find(t, "runnable", 2), nullptr) << "its last attempt left it dead";
  const TimelineEvent* verdict = Find(t, "finished", 0);
  ASSERT_NE(verdict, nullptr);
  EXPECT_EQ(verdict->text, "the job is dead: a crash loop: crashes 2/2, attempts 2/5");
  EXPECT_EQ(verdict->evidence["reason"], "crash_loop");
  EXPECT_TRUE(std::is_sorted(t.events.begin(), t.events.end(),
                             [](const auto& a, const auto& b) { return a.at < b.at; }));
}

// Issue 35: the move to dead that a retry cleared from the job's row, and
// who retried it, by which operation; a fresh retry says so.
TEST(TimelineTest, ARetriedJobShowsItsEarlierEndAndWhoRetriedIt) {
  JobInfo j;
  j.id = 15;
  j.state = JobState::kRunning;
  j.created_at = kT;
  AttemptInfo failed = Attempt(2, 5, 2, kT + 1'000);
  failed.finished_at = kT + 2'000;
  failed.outcome = "error";
  failed.error = Error(ErrorKind::kError, "exit 1", std::nullopt);
  j.attempts = {failed, Attempt(3, 5, 3, kT + 180'000)};
  JobActionInfo retry;
  retry.at = kT + 179'000;
  retry.action = "retry";
  retry.actor = "cli:root";
  retry.op = 1;
  retry.fresh = true;
  retry.from = JobState::kDead;
  retry.finished_at = kT + 2'000;
  retry.last_error = ErrorKind::kError;
  retry.charged = retry.max_attempts = 2;
  const JobTimeline t = BuildTimeline(j, {}, {}, {retry});
  const TimelineEvent* dead = Find(t, "finished", 0);
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(dead->at, kT + 2'000);
  EXPECT_EQ(dead->text, "the job is dead: its attempts ran out (attempts 2/2, last error error)");
  EXPECT_EQ(dead->evidence["reason"], "attempts_exhausted");
  const TimelineEvent* op = Find(t, "operator", 0);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->text,
            "retried by cli:root (operation 1): attempts and crashes reset, checkpoint dropped "
            "(fresh)");
  EXPECT_EQ(op->evidence["op"], 1);
  std::vector<std::string> kinds;
  for (const TimelineEvent& e : t.events) kinds.push_back(e.kind);
  // Not out of attempts: its retry policy (or at-most-once) ended it.
  j.state = JobState::kDead;
  j.finished_at = kT + 200'000;
  j.last_error = ErrorKind::kLost;
  j.charged = 1;
  j.max_attempts = 5;
  const JobTimeline ended = BuildTimeline(j, {}, {}, {});
  const TimelineEvent* none = Find(ended, "finished", 0);
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->text,
            "the job is dead: its last attempt (lost) was not retried (retry none, or "
            "at-most-once after its start; attempts 1/5)");
  EXPECT_EQ(none->evidence["reason"], "not_retried");
  JobActionInfo release;
  release.action = "release";
  release.actor = "cli:root";
  release.from = JobState::kRunning;
  const JobTimeline released = BuildTimeline(j, {}, {}, {release});
  EXPECT_EQ(Find(released, "operator", 0)->text,
            "its worker released by cli:root: its attempt is lost, and the job runs again");
  EXPECT_EQ(kinds, (std::vector<std::string>{"enqueued", "claimed", "failed", "finished",
                                             "operator", "claimed"}));
}

}  // namespace
}  // namespace warden
