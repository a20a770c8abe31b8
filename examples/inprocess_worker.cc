// An application that enqueues jobs and runs them with in-process handlers.
//
//   example_inprocess [DB_URL] [JOBS]
//
// Enqueues JOBS "resize" jobs in one transaction, runs a worker with a
// handler that checkpoints its progress, and exits when every job is done.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "warden/warden.h"

int main(int argc, char** argv) {
  const std::string db = argc > 1 ? argv[1] : "example.db";
  const int jobs = argc > 2 ? std::atoi(argv[2]) : 100;

  auto client = warden::Client::Open(db);
  if (!client) {
    std::fprintf(stderr, "open: %s\n", client.error().ToString().c_str());
    return 1;
  }
  std::vector<warden::JobSpec> specs;
  for (int i = 0; i < jobs; ++i) {
    warden::JobSpec spec;
    spec.task = "resize";
    spec.payload = {{"image", "img-" + std::to_string(i) + ".png"}, {"width", 640}};
    specs.push_back(std::move(spec));
  }
  if (auto r = (*client)->EnqueueMany(specs); !r) {
    std::fprintf(stderr, "enqueue: %s\n", r.error().ToString().c_str());
    return 1;
  }

  warden::WorkerOptions options;
  options.name = "example";
  options.concurrency = 4;
  options.exit_when_idle = true;
  auto worker = warden::Worker::Create(db, options);
  if (!worker) {
    std::fprintf(stderr, "worker: %s\n", worker.error().ToString().c_str());
    return 1;
  }
  (*worker)->Handle("resize", [](warden::JobContext& ctx) {
    const std::string image = ctx.payload()["image"];
    // A retried attempt resumes from its last checkpoint.
    int step = ctx.checkpoint().is_null() ? 0 : ctx.checkpoint()["step"].get<int>();
    for (; step < 3 && !ctx.stop_requested(); ++step) {
      if (auto s = ctx.SaveCheckpoint({{"step", step + 1}}); !s.ok()) return s;
    }
    ctx.SetResult({{"image", image}, {"width", ctx.payload()["width"]}});
    return warden::Status::Ok();
  });
  if (auto s = (*worker)->Run(); !s.ok()) {
    std::fprintf(stderr, "run: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("%lld jobs succeeded\n",
              static_cast<long long>((*worker)->counters().succeeded.load()));
  return 0;
}
