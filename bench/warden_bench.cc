// warden's side of the benchmark scenarios (bench/README.md). One run per
// invocation; bench/run.sh repeats them. Each prints one JSON line.
//
//   warden_bench bulk       --db URL --jobs N [--batch B]
//   warden_bench throughput --db URL --jobs N --concurrency C --variant NAME
//   warden_bench backlog    --db URL --backlog B --measure M --concurrency C
//   warden_bench latency    --db URL --jobs N [--interval-ms 10] --concurrency C --variant NAME
//   warden_bench reset         --db URL   (empties the store)
//   warden_bench count-workers --db URL --at-least N   (exit 0 when N are active)
//   common: --run I
//
// Every run starts on an emptied store (the SQLite file removed, or the
// PostgreSQL schema `warden` dropped). The worker is a separate process
// (`warden_bench worker`), so its peak RSS is its own.
#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "bench_worker.h"
#include "warden/warden.h"

namespace bench {
namespace {

struct Common {
  std::string url;
  std::string system;
  int64_t run = 1;
};

Json Base(const Common& c, const std::string& scenario, const std::string& variant) {
  return {{"scenario", scenario}, {"system", c.system}, {"variant", variant}, {"run", c.run}};
}

std::unique_ptr<warden::Client> OpenFresh(const Common& c) {
  if (!ResetStore(c.url)) return nullptr;
  auto client = warden::Client::Open(c.url);
  if (!client) {
    std::fprintf(stderr, "open %s: %s\n", c.url.c_str(), client.error().ToString().c_str());
    return nullptr;
  }
  return std::move(*client);
}

// Enqueues `n` no-op jobs in batches of `batch`; returns jobs/s or -1.
double Enqueue(warden::Client& client, int64_t n, int64_t batch) {
  std::vector<warden::JobSpec> specs(batch);
  for (auto& s : specs) s.task = "noop";
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t done = 0; done < n; done += batch) {
    const size_t k = std::min(batch, n - done);
    if (auto r = client.EnqueueMany(std::span(specs.data(), k)); !r) {
      std::fprintf(stderr, "enqueue: %s\n", r.error().ToString().c_str());
      return -1;
    }
  }
  return n / SecondsSince(t0);
}

// Runs one worker process until it has handled `stop_after` jobs.
bool RunWorker(const Common& c, int64_t concurrency, int64_t stop_after, Json* out) {
  int fd = -1;
  const pid_t pid =
      SpawnSelf({"worker", "--db", c.url, "--concurrency", std::to_string(concurrency),
                 "--stop-after", std::to_string(stop_after)},
                &fd);
  if (pid < 0) return false;
  ReadLine(fd);  // "ready"
  const std::string text = ReadAll(fd);
  if (!WaitOk(pid)) return false;
  *out = Json::parse(text, nullptr, false);
  return !out->is_discarded();
}

int Bulk(const Common& c, const Args& a) {
  const int64_t n = a.Int("jobs", 50'000), batch = a.Int("batch", 1000);
  auto client = OpenFresh(c);
  if (!client) return 1;
  const double rate = Enqueue(*client, n, batch);
  if (rate < 0) return 1;
  if (CountState(c.url, "available") != n) {
    std::fprintf(stderr, "bulk: not every job is available\n");
    return 1;
  }
  Json line = Base(c, "bulk", "batch " + std::to_string(batch));
  line["jobs"] = n;
  line["jobs_per_s"] = rate;
  Emit(line);
  return 0;
}

int Throughput(const Common& c, const Args& a) {
  const int64_t n = a.Int("jobs", 50'000), conc = a.Int("concurrency", 8);
  auto client = OpenFresh(c);
  if (!client || Enqueue(*client, n, 1000) < 0) return 1;
  client.reset();
  Json w;
  if (!RunWorker(c, conc, n, &w)) return 1;
  const int64_t done = CountState(c.url, "succeeded");
  if (done != n) {
    std::fprintf(stderr, "throughput: %lld of %lld jobs succeeded\n", static_cast<long long>(done),
                 static_cast<long long>(n));
    return 1;
  }
  Json line = Base(c, "throughput", a.Str("variant", "default"));
  line["settings"] = "concurrency " + std::to_string(conc);
  line["jobs"] = n;
  line["jobs_per_s"] = w["handled"].get<double>() / w["seconds"].get<double>();
  line["rss_mib"] = w["rss_mib"];
  Emit(line);
  return 0;
}

int Backlog(const Common& c, const Args& a) {
  const int64_t backlog = a.Int("backlog", 10'000), measure = a.Int("measure", 10'000);
  const int64_t conc = a.Int("concurrency", 8);
  auto client = OpenFresh(c);
  if (!client) return 1;
  const double enqueue_rate = Enqueue(*client, backlog, 5000);
  if (enqueue_rate < 0) return 1;
  client.reset();
  if (!SettleStore(c.url)) return 1;
  Json w;
  if (!RunWorker(c, conc, std::min(backlog, measure), &w)) return 1;
  Json line = Base(c, "backlog", std::to_string(backlog));
  line["settings"] = "concurrency " + std::to_string(conc);
  line["backlog"] = backlog;
  line["jobs"] = w["handled"];
  line["jobs_per_s"] = w["handled"].get<double>() / w["seconds"].get<double>();
  line["enqueue_jobs_per_s"] = enqueue_rate;
  Emit(line);
  return 0;
}

int Latency(const Common& c, const Args& a) {
  const int64_t n = a.Int("jobs", 1000), interval_ms = a.Int("interval-ms", 10);
  const int64_t conc = a.Int("concurrency", 8);
  auto client = OpenFresh(c);
  if (!client) return 1;
  int fd = -1;
  const pid_t pid = SpawnSelf({"worker", "--db", c.url, "--concurrency", std::to_string(conc),
                               "--stop-after", std::to_string(n), "--latency"},
                              &fd);
  if (pid < 0 || ReadLine(fd) != "ready") return 1;
  // Let the worker register and go idle: the scenario is an idle worker.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  warden::JobSpec spec;
  spec.task = "noop";
  auto next = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; ++i) {
    std::this_thread::sleep_until(next);
    next += std::chrono::milliseconds(interval_ms);
    spec.payload = {{"t_us", WallMicros()}};
    if (auto r = client->Enqueue(spec); !r) {
      std::fprintf(stderr, "enqueue: %s\n", r.error().ToString().c_str());
      return 1;
    }
  }
  const Json w = Json::parse(ReadAll(fd), nullptr, false);
  if (!WaitOk(pid) || w.is_discarded()) return 1;
  Json line = Base(c, "latency", a.Str("variant", "default"));
  line["settings"] = "concurrency " + std::to_string(conc);
  line["jobs"] = n;
  line["samples_ms"] = w["samples_ms"];
  Emit(line);
  return 0;
}

// For bench/rescue.py: are both workers registered?
int CountWorkers(const Common& c, const Args& a) {
  auto client = warden::Client::Open(c.url);
  if (!client) return 1;
  auto workers = (*client)->ListWorkers();
  if (!workers) return 1;
  int64_t active = 0;
  for (const auto& w : *workers) active += w.state == warden::WorkerState::kActive;
  return active >= a.Int("at-least", 1) ? 0 : 1;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: warden_bench SCENARIO --db URL ... (see bench/warden_bench.cc)\n");
    return 2;
  }
  const std::string cmd = argv[1];
  const bench::Args args(argc, argv, 2);
  if (cmd == "worker") return bench::RunBenchWorker(args);
  bench::Common c;
  c.url = args.Str("db", "");
  c.system = args.Str("system", bench::IsPostgres(c.url) ? "warden-pg" : "warden-sqlite");
  c.run = args.Int("run", 1);
  if (c.url.empty()) {
    std::fprintf(stderr, "--db is required\n");
    return 2;
  }
  if (cmd == "reset") return bench::ResetStore(c.url) ? 0 : 1;
  if (cmd == "count-workers") return bench::CountWorkers(c, args);
  if (cmd == "bulk") return bench::Bulk(c, args);
  if (cmd == "throughput") return bench::Throughput(c, args);
  if (cmd == "backlog") return bench::Backlog(c, args);
  if (cmd == "latency") return bench::Latency(c, args);
  std::fprintf(stderr, "unknown scenario %s\n", cmd.c_str());
  return 2;
}
