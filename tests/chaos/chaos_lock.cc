// warden_chaos_lock DB_PATH MILLIS: holds an SQLite database's write lock
// (BEGIN EXCLUSIVE) for MILLIS, as another application sharing the file
// might. Prints "locked MS" once it holds the lock and "released MS" once
// it let go (MS: CLOCK_REALTIME in ms). Waits up to a minute for the lock.
#include <sqlite3.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

long long WallMs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: warden_chaos_lock DB_PATH MILLIS\n");
    return 2;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, nullptr) !=
      SQLITE_OK) {
    std::fprintf(stderr, "open %s: %s\n", argv[1], sqlite3_errmsg(db));
    return 1;
  }
  sqlite3_busy_timeout(db, 60'000);
  if (sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    std::fprintf(stderr, "BEGIN EXCLUSIVE: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  std::printf("locked %lld\n", WallMs());
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::milliseconds(std::atol(argv[2])));
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  std::printf("released %lld\n", WallMs());
  return 0;
}
