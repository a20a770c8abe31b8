// warden_chaos_worker: a worker process with in-process handlers, the
// library counterpart of `warden worker` for the chaos runner.
//
//   warden_chaos_worker --db URL --name NAME --ledger PATH [--queues Q[,Q...]]
//       [--concurrency N] [--heartbeat D] [--lease D] [--keepalive-threshold D]
//       [--sweep-interval D] [--shutdown-timeout D] [--node NAME]
//
// Handles task `chaos-inproc` with the job body of job_plan.h: it sleeps in
// short slices so it notices ctx.stop_requested() (timeout, fencing,
// shutdown) within ~10 ms, saves checkpoints through the context, and
// records every step in the ledger. Runs until SIGTERM/SIGINT like `warden
// worker` (a second signal releases the running jobs at once).
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <sstream>
#include <thread>

#include "warden/duration.h"
#include "job_plan.h"
#include "warden/warden.h"

namespace {

struct Flags {
  std::string db, name, ledger, queues = "chaos", node;
  int concurrency = 8;
  std::string heartbeat = "250ms", lease = "3s", keepalive = "3s",
              sweep = "250ms", shutdown = "5s";
};

bool ParseInto(const std::string& flag, const std::string& text,
               warden::Millis* out) {
  auto d = warden::ParseDuration(text);
  if (!d.has_value()) {
    std::fprintf(stderr, "%s: %s\n", flag.c_str(),
                 d.error().ToString().c_str());
    return false;
  }
  *out = *d;
  return true;
}

warden::Status RunHandler(warden::JobContext& ctx, warden::Worker& worker,
                          chaos::LedgerWriter& ledger) {
  const int64_t entered = chaos::WallMs();
  const chaos::JobPlan plan = chaos::JobPlan::FromJson(ctx.payload());
  const chaos::RunId run{ctx.id(), ctx.attempt(), ctx.lease_token(),
                         worker.id()};
  chaos::JobHooks hooks;
  hooks.started_ms = entered;
  hooks.sleep = [&ctx](int ms) {
    for (int slept = 0; slept < ms; slept += 10) {
      if (ctx.stop_requested()) return false;
      std::this_thread::sleep_for(warden::Millis(std::min(10, ms - slept)));
    }
    return !ctx.stop_requested();
  };
  hooks.checkpoint = [&ctx](int step) {
    // Store errors (busy, disconnected) are retried while the run may go on;
    // a refusal (fenced off) or a stop ends it.
    while (true) {
      warden::Status s = ctx.SaveCheckpoint({{"step", step}});
      if (s.ok()) return true;
      if (!s.transient() || ctx.stop_requested()) return false;
      std::this_thread::sleep_for(warden::Millis(50));
    }
  };
  switch (chaos::RunJobBody(plan, run, chaos::CheckpointStep(ctx.checkpoint()),
                            ledger, hooks)) {
    case chaos::BodyResult::kOk:
      ctx.SetResult({{"n", plan.n}});
      return warden::Status::Ok();
    case chaos::BodyResult::kFail:
      return warden::Internal("planned failure on attempt " +
                              std::to_string(run.attempt));
    case chaos::BodyResult::kStopped:
      return warden::Unavailable("stopped");
    case chaos::BodyResult::kFenced:
      break;
  }
  return warden::FailedPrecondition("checkpoint refused: fenced off");
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"chaos worker with in-process handlers"};
  app.add_option("--db", f.db)->required();
  app.add_option("--name", f.name)->required();
  app.add_option("--ledger", f.ledger)->required();
  app.add_option("--queues", f.queues);
  app.add_option("--concurrency", f.concurrency)->check(CLI::Range(1, 256));
  app.add_option("--heartbeat", f.heartbeat);
  app.add_option("--lease", f.lease);
  app.add_option("--keepalive-threshold", f.keepalive);
  app.add_option("--sweep-interval", f.sweep);
  app.add_option("--shutdown-timeout", f.shutdown);
  app.add_option("--node", f.node);  // as `warden worker --node`
  CLI11_PARSE(app, argc, argv);

  warden::WorkerOptions o;
  o.name = f.name;
  o.node = f.node;
  o.queues.clear();
  std::stringstream queues(f.queues);  // comma-separated, as `warden worker`'s
  for (std::string q; std::getline(queues, q, ',');) {
    if (!q.empty()) o.queues.push_back(q);
  }
  o.concurrency = f.concurrency;
  if (!ParseInto("--heartbeat", f.heartbeat, &o.heartbeat) ||
      !ParseInto("--lease", f.lease, &o.lease) ||
      !ParseInto("--keepalive-threshold", f.keepalive,
                 &o.keepalive_threshold) ||
      !ParseInto("--sweep-interval", f.sweep, &o.sweep_interval) ||
      !ParseInto("--shutdown-timeout", f.shutdown, &o.shutdown_timeout)) {
    return 2;
  }
  // As in `warden worker`: one thread takes the signals with sigwait.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  auto created = warden::Worker::Create(f.db, o);
  if (!created.has_value()) {
    std::fprintf(stderr, "warden_chaos_worker: %s\n",
                 created.error().ToString().c_str());
    return 1;
  }
  warden::Worker& worker = **created;
  chaos::LedgerWriter ledger(f.ledger);
  worker.Handle("chaos-inproc", [&](warden::JobContext& ctx) {
    return RunHandler(ctx, worker, ledger);
  });
  std::atomic<bool> exiting{false};
  std::thread signals([&] {
    int count = 0;
    while (true) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (exiting) return;
      worker.Stop(++count > 1);
    }
  });
  warden::Status s = worker.Run();
  exiting = true;
  pthread_kill(signals.native_handle(), SIGTERM);
  signals.join();
  if (!s.ok()) {
    std::fprintf(stderr, "warden_chaos_worker: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
