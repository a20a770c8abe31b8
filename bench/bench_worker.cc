// The worker side of warden_bench: one process, in-process no-op handlers.
//
// Prints "ready" before it starts claiming, then, when it has handled
// --stop-after jobs (or, with --seconds T, T seconds after its first job
// started, whichever comes first) and shut down gracefully (every
// completion recorded),
// one JSON line: handled, seconds (first job's start to the end of the
// shutdown), rss_mib (peak) and, with --latency, samples_ms (enqueue call
// to handler start, from the payload's t_us).
#include "bench_worker.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <optional>
#include <vector>

#include "warden/warden.h"

namespace bench {

int RunBenchWorker(const Args& args) {
  const std::string url = args.Str("db", "");
  const int64_t stop_after = args.Int("stop-after", 0);
  const int64_t seconds = args.Int("seconds", 0);  // 0: no time bound
  const bool latency = args.Has("latency");
  warden::WorkerOptions o;
  o.concurrency = static_cast<int>(args.Int("concurrency", o.concurrency));
  o.log = [](const std::string&) {};
  o.log_level = warden::LogLevel::kWarn;  // no line per finished job, as before
  auto worker = warden::Worker::Create(url, o);
  if (!worker) {
    std::fprintf(stderr, "worker: %s\n", worker.error().ToString().c_str());
    return 1;
  }
  warden::Worker* w = worker->get();

  std::atomic<int64_t> handled{0};
  std::atomic<bool> stopping{false};
  std::once_flag first;
  std::chrono::steady_clock::time_point t_first;
  std::mutex mu;
  std::vector<double> samples;
  w->Handle("noop", [&](warden::JobContext& ctx) {
    const int64_t now_us = WallMicros();
    std::call_once(first, [&] { t_first = std::chrono::steady_clock::now(); });
    if (latency) {
      const int64_t t_us = ctx.payload().value("t_us", int64_t{0});
      std::lock_guard lock(mu);
      samples.push_back((now_us - t_us) / 1000.0);
    }
    // t_first is visible here: every handler passed the call_once above.
    // Stop once: a second Stop() would release the running jobs at once.
    const bool done = ++handled == stop_after || (seconds > 0 && SecondsSince(t_first) >= seconds);
    if (done && !stopping.exchange(true)) w->Stop();
    return warden::Status::Ok();
  });
  std::printf("ready\n");
  std::fflush(stdout);
  if (auto s = w->Run(); !s.ok()) {
    std::fprintf(stderr, "worker: %s\n", s.ToString().c_str());
    return 1;
  }
  Json out = {{"handled", w->counters().succeeded.load()},
              {"seconds", SecondsSince(t_first)},
              {"rss_mib", PeakRssMib()}};
  if (latency) out["samples_ms"] = samples;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace bench
