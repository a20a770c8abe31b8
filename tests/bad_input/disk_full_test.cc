// Row "full disk" of docs/bad-input.md, on a small tmpfs (needs root:
// skipped elsewhere, failed under CI):
//  - every enqueue either succeeds durably or fails with one clear line
//    (kUnavailable, "the disk holding ... is full"); once space is freed
//    every accepted job is there and the database is sound;
//  - a worker whose completion cannot be written keeps retrying it; the job
//    is never lost, never completed twice, and succeeds once space returns.
//
// SQLite only: the disk is the client's here; a PostgreSQL server's full
// disk is the server's error, reported like any outage (vanish_test.cc).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "bad_input.h"

namespace bi {
namespace {

using warden::JobState;
using warden::StatusCode;

class DiskFullTest : public BadInputTest {
 protected:
  // A tmpfs of `size` at dir()/disk; its path, or "" (never fill the real
  // disk by mistake).
  std::string SmallDisk(const std::string& size) {
    const std::string disk = dir() + "/disk";
    std::filesystem::create_directories(disk);
    std::string error;
    auto m = Mount::Tmpfs(disk, size, &error);
    EXPECT_TRUE(m) << error;
    if (!m) return "";
    Keep(std::move(m));
    return disk;
  }
  // Writes `path` until the disk is full; returns the bytes written.
  static size_t FillUp(const std::string& path) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return 0;
    const std::string chunk(4096, 'f');
    size_t total = 0;
    while (true) {
      const ssize_t n = write(fd, chunk.data(), chunk.size());
      if (n <= 0) break;
      total += static_cast<size_t>(n);
    }
    close(fd);
    return total;
  }
  static warden::JobSpec Spec(int i) {
    warden::JobSpec s;
    s.task = "t";
    s.payload = {{"i", i}, {"pad", std::string(8000, 'p')}};
    return s;
  }
  static bool SaysFull(const std::string& text) {
    return text.find("(the disk holding '") != std::string::npos &&
           text.find("' is full)") != std::string::npos;
  }
};

TEST_P(DiskFullTest, EnqueueOnAFullDiskFailsClearlyAndLosesNothing) {
  if (!RequireMounts()) return;
  const std::string disk = SmallDisk("2m");
  ASSERT_FALSE(disk.empty());
  const std::string path = disk + "/jobs.db", reserve = disk + "/reserve";
  WriteBytes(reserve, std::string(256 * 1024, 'r'));  // freed at the end
  auto opened = warden::Client::Open(path);
  ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
  warden::Client& c = **opened;  // until the disk is full

  std::map<int64_t, int> accepted;  // id -> payload "i"
  int next = 0, refusals = 0;
  for (int round = 0; round < 2000 && refusals < 6; ++round) {
    if (round % 4 == 3) {  // every fourth through the CLI
      const int i = next++;
      CliResult r = Warden(path, {"--json", "add", "t", Spec(i).payload.dump()});
      if (r.exit_code == 0) {
        accepted[r.json["id"].get<int64_t>()] = i;
      } else {
        ++refusals;
        EXPECT_EQ(r.exit_code, 1) << r.err;
        EXPECT_TRUE(OneLineError(r)) << r.err;
        EXPECT_TRUE(SaysFull(r.err)) << r.err;
        EXPECT_EQ(r.json["error"]["code"], "unavailable") << r.out;
      }
      continue;
    }
    std::vector<warden::JobSpec> batch;
    for (int k = 0; k < 4; ++k) batch.push_back(Spec(next++));
    auto r = c.EnqueueMany(batch);
    if (r.has_value()) {
      for (size_t k = 0; k < r->size(); ++k) accepted[(*r)[k].id] = batch[k].payload["i"];
    } else {
      ++refusals;
      EXPECT_EQ(r.error().code(), StatusCode::kUnavailable) << r.error().ToString();
      EXPECT_TRUE(SaysFull(r.error().message())) << r.error().ToString();
    }
  }
  ASSERT_GE(refusals, 6) << "the disk never filled up";
  std::cout << "[ measure  ] accepted " << accepted.size() << " jobs before the disk was full\n";

  // While still full: a fresh reader sees every accepted job, intact.
  auto check = [&](warden::Client& reader) {
    auto n = reader.CountUnfinished();
    ASSERT_TRUE(n.has_value()) << n.error().ToString();
    EXPECT_EQ(*n, static_cast<int64_t>(accepted.size()));
    for (const auto& [id, i] : accepted) {
      auto job = reader.GetJob(id);
      ASSERT_TRUE(job.has_value()) << "job " << id << ": " << job.error().ToString();
      EXPECT_EQ(job->payload, Spec(i).payload) << "job " << id;
    }
  };
  {
    auto reader = warden::Client::Open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error().ToString();
    check(**reader);
  }
  // Still full, with no process holding the database open: opening it
  // needs room for the -shm file. It works, or says why not.
  opened->reset();
  CliResult r = Warden(path, {"stats"});
  if (r.exit_code != 0) {
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(OneLineError(r, "full")) << r.err;
  }
  // Space again: enqueue works, and after a reopen everything is there and
  // the file is sound.
  std::filesystem::remove(reserve);
  opened = warden::Client::Open(path);
  ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
  auto more = (*opened)->Enqueue(Spec(next));
  ASSERT_TRUE(more.has_value()) << more.error().ToString();
  accepted[more->id] = next;
  opened->reset();
  auto reopened = warden::Client::Open(path);
  ASSERT_TRUE(reopened.has_value()) << reopened.error().ToString();
  check(**reopened);
  EXPECT_EQ(SqliteQuery(path, "PRAGMA integrity_check"), "ok");
}

TEST_P(DiskFullTest, WorkerThatCannotRecordACompletionKeepsTheJobSafe) {
  if (!RequireMounts()) return;
  const std::string disk = SmallDisk("4m");
  ASSERT_FALSE(disk.empty());
  const std::string path = disk + "/jobs.db", go = dir() + "/go", filler = disk + "/filler";
  // The job waits for `go`, then reports a 600 KB result: more than the
  // full disk can take.
  const std::string job_cmd = Job(
      "log start; while [ ! -e '" + go + "' ]; do sleep 0.05; done; "
      "printf 'result {\"blob\": \"%s\"}\\n' \"$(head -c 600000 /dev/zero | tr '\\0' b)\" >&3; "
      "log end");
  std::vector<std::string> argv = {WARDEN_BIN, "--db", path, "worker", "--allow-cmd",
                                   "--name", "w", "--concurrency", "2"};
  for (const std::string& f : FastFlags()) argv.push_back(f);
  auto worker = wt::Child::Spawn(argv, dir() + "/w.out", dir() + "/w.log");
  auto log_has = [&](const std::string& text) {
    return worker->Stderr().find(text) != std::string::npos;
  };
  ASSERT_TRUE(wt::WaitFor([&] { return log_has("started as worker") || worker->Exited(); }));
  ASSERT_FALSE(worker->Exited()) << worker->Stderr();
  CliResult added = Warden(path, {"--json", "add", "--cmd", job_cmd});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  const int64_t id = added.json["id"].get<int64_t>();
  ASSERT_TRUE(wt::WaitFor([&] { return LedgerHas(id, 1, "start"); }));

  const size_t filled = FillUp(filler);
  std::cout << "[ measure  ] filled the disk with " << filled << " more bytes\n";
  WriteBytes(go, "");
  ASSERT_TRUE(wt::WaitFor([&] { return LedgerHas(id, 1, "end"); }));
  ASSERT_TRUE(wt::WaitFor([&] { return log_has("is full)"); }))
      << "the completion did not hit the full disk:\n" << worker->Stderr();
  // An enqueue meanwhile is refused with one line, or stored.
  CliResult late = Warden(path, {"add", "t", std::string(R"({"pad": ")") +
                                                 std::string(100'000, 'p') + "\"}"});
  if (late.exit_code != 0) {
    EXPECT_TRUE(OneLineError(late, "is full)")) << late.err;
  }
  // Meanwhile the job is not done, and not gone.
  std::string seen;
  EXPECT_TRUE(wt::StaysTrueFor(
      [&] {
        auto reader = warden::Client::Open(path);
        if (!reader.has_value()) return true;  // a read may need room for the -shm: try again
        auto job = (*reader)->GetJob(id);
        if (!job.has_value()) {
          seen = job.error().ToString();
          return false;
        }
        seen = warden::JobStateName(job->state);
        return job->state == JobState::kRunning || job->state == JobState::kAvailable ||
               job->state == JobState::kRetryable;
      },
      Millis(1000), Millis(100)))
      << "while the disk was full the job became: " << seen;

  std::filesystem::remove(filler);
  auto done = [&] {
    auto reader = warden::Client::Open(path);
    if (!reader.has_value()) return false;
    auto job = (*reader)->GetJob(id);
    return job.has_value() && job->state == JobState::kSucceeded;
  };
  ASSERT_TRUE(wt::WaitFor(done, Millis(60'000))) << worker->Stderr();
  auto reader = warden::Client::Open(path);
  ASSERT_TRUE(reader.has_value());
  auto job = (*reader)->GetJob(id);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->result["blob"].get<std::string>().size(), 600000u);
  int succeeded = 0;
  for (const auto& a : job->attempts) {
    EXPECT_TRUE(a.outcome == "succeeded" || a.outcome == "lost") << a.outcome;
    if (a.outcome == "succeeded") ++succeeded;
  }
  EXPECT_EQ(succeeded, 1) << "exactly one committed completion";
  std::cout << "[ measure  ] the job took " << job->attempts.size()
            << " attempt(s): " << (job->attempts.size() == 1 ? "its completion was retried"
                                                              : "it was recovered and run again")
            << "\n";
  EXPECT_FALSE(worker->Exited()) << worker->Stderr();
  EXPECT_EQ(SqliteQuery(path, "PRAGMA integrity_check"), "ok");
}

INSTANTIATE_TEST_SUITE_P(Backends, DiskFullTest, ::testing::Values(wt::Backend::kSqlite),
                         wt::BackendName);

}  // namespace
}  // namespace bi
