// Throughput of no-op jobs on the embedded SQLite store.
//
//   warden_bench_throughput [--jobs N] [--workers W] [--concurrency C]
//                           [--runs R] [--sync full|normal]
//
// Each run: a fresh database; enqueue N jobs in batches of 1000 (timed),
// then W worker processes with in-process no-op handlers drain the queue
// (timed from their start until the last job is recorded). Prints a
// markdown table: median of R runs, and min-max.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "warden/warden.h"

namespace {

struct Args {
  int jobs = 50'000;
  int workers = 2;
  int concurrency = 16;
  int runs = 3;
  std::string sync = "full";
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int RunWorker(const std::string& url, int concurrency) {
  warden::WorkerOptions o;
  o.concurrency = concurrency;
  o.exit_when_idle = true;
  o.log = [](const std::string&) {};
  o.log_level = warden::LogLevel::kWarn;  // no line per finished job, as before
  auto worker = warden::Worker::Create(url, o);
  if (!worker) return 1;
  (*worker)->Handle("noop", [](warden::JobContext&) { return warden::Status::Ok(); });
  return (*worker)->Run().ok() ? 0 : 1;
}

struct Sample {
  double enqueue_per_s, process_per_s;
};

bool OneRun(const Args& a, Sample* out) {
  char tmpl[] = "/tmp/warden-bench-XXXXXX";
  if (!mkdtemp(tmpl)) return false;
  const std::string dir = tmpl;
  const std::string url =
      "sqlite:" + dir + "/bench.db" + (a.sync == "normal" ? "?sync=normal" : "");
  auto client = warden::Client::Open(url);
  if (!client) {
    std::fprintf(stderr, "%s\n", client.error().ToString().c_str());
    return false;
  }
  std::vector<warden::JobSpec> batch(1000);
  for (auto& s : batch) s.task = "noop";
  auto t0 = std::chrono::steady_clock::now();
  for (int done = 0; done < a.jobs; done += 1000) {
    const size_t n = std::min(1000, a.jobs - done);
    if (auto r = (*client)->EnqueueMany(std::span(batch.data(), n)); !r) {
      std::fprintf(stderr, "%s\n", r.error().ToString().c_str());
      return false;
    }
  }
  out->enqueue_per_s = a.jobs / Seconds(t0);

  t0 = std::chrono::steady_clock::now();
  std::vector<pid_t> pids;
  for (int i = 0; i < a.workers; ++i) {
    const pid_t pid = fork();
    if (pid == 0) _exit(RunWorker(url, a.concurrency));
    pids.push_back(pid);
  }
  bool ok = true;
  for (pid_t p : pids) {
    int status = 0;
    waitpid(p, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  out->process_per_s = a.jobs / Seconds(t0);
  auto stats = (*client)->GetStats();
  int64_t succeeded = 0;
  if (stats) {
    for (auto& [state, n] : stats->jobs) {
      if (state == "succeeded") succeeded = n;
    }
  }
  std::filesystem::remove_all(dir);
  if (succeeded != a.jobs) {
    std::fprintf(stderr, "only %lld of %d jobs succeeded\n", static_cast<long long>(succeeded),
                 a.jobs);
    return false;
  }
  return ok;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--jobs") a.jobs = std::atoi(v.c_str());
    else if (k == "--workers") a.workers = std::atoi(v.c_str());
    else if (k == "--concurrency") a.concurrency = std::atoi(v.c_str());
    else if (k == "--runs") a.runs = std::atoi(v.c_str());
    else if (k == "--sync") a.sync = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (a.jobs < 1 || a.workers < 1 || a.concurrency < 1 || a.runs < 1 ||
      (a.sync != "full" && a.sync != "normal")) {
    std::fprintf(stderr, "bad arguments\n");
    return 2;
  }
  std::vector<double> enq, proc;
  for (int r = 0; r < a.runs; ++r) {
    Sample s;
    if (!OneRun(a, &s)) return 1;
    enq.push_back(s.enqueue_per_s);
    proc.push_back(s.process_per_s);
    std::fprintf(stderr, "run %d: enqueue %.0f jobs/s, process %.0f jobs/s\n", r + 1,
                 s.enqueue_per_s, s.process_per_s);
  }
  std::printf("| scenario (SQLite, synchronous=%s, %d jobs, %d runs) | median | min-max |\n",
              a.sync == "full" ? "FULL" : "NORMAL", a.jobs, a.runs);
  std::printf("|---|---|---|\n");
  std::printf("| bulk enqueue (batches of 1000) | %.0f jobs/s | %.0f-%.0f |\n", Median(enq),
              *std::min_element(enq.begin(), enq.end()), *std::max_element(enq.begin(), enq.end()));
  std::printf("| no-op jobs, %d workers x %d slots | %.0f jobs/s | %.0f-%.0f |\n", a.workers,
              a.concurrency, Median(proc), *std::min_element(proc.begin(), proc.end()),
              *std::max_element(proc.begin(), proc.end()));
  return 0;
}
