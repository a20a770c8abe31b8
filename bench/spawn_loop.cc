// The bare spawn loop that command jobs are measured against
// (bench/cmd_jobs.sh): THREADS threads each posix_spawn `/bin/sh -c
// COMMAND` and wait for it, N times in all. No queue, no supervision, no
// store: what running the command costs this machine. Prints one JSON line.
//
//   warden_bench_spawn_loop N THREADS [COMMAND]   (COMMAND default: true)
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s N THREADS [COMMAND]\n", argv[0]);
    return 2;
  }
  const long n = std::atol(argv[1]);
  const int threads = std::atoi(argv[2]);
  std::string command = argc > 3 ? argv[3] : "true";
  if (n <= 0 || threads <= 0) return 2;
  std::atomic<long> next{0}, failed{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      std::string sh = "/bin/sh", c = "-c", cmd = command;
      char* args[] = {sh.data(), c.data(), cmd.data(), nullptr};
      while (next.fetch_add(1) < n) {
        pid_t pid;
        int status = 0;
        if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, args, environ) != 0 ||
            waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          ++failed;
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"spawns\":%ld,\"threads\":%d,\"failed\":%ld,\"seconds\":%.6f,\"per_s\":%.1f}\n", n,
              threads, failed.load(), seconds, static_cast<double>(n) / seconds);
  return failed.load() == 0 ? 0 : 1;
}
