// The consumer's work, built against an installed warden by
// tests/packaging (once with find_package, once with pkg-config), into the
// program (main.cc) and into a shared library that it loads: it enqueues
// one job on an SQLite file, runs it with an in-process handler, and
// prints its result. The shared library holds what it uses of
// libwarden.a, which links only because that code is position-independent.
#include <cstdio>
#include <string>

#include <warden/warden.h>

extern "C" int warden_consumer_run(const char* db_file) {
  const std::string db = db_file;
  auto client = warden::Client::Open(db);
  if (!client) {
    std::fprintf(stderr, "open: %s\n", client.error().ToString().c_str());
    return 1;
  }
  warden::JobSpec spec;
  spec.task = "greet";
  spec.payload = {{"name", "installed tree"}};
  auto added = (*client)->Enqueue(spec);
  if (!added) {
    std::fprintf(stderr, "enqueue: %s\n", added.error().ToString().c_str());
    return 1;
  }

  warden::WorkerOptions options;
  options.name = "consumer";
  options.exit_when_idle = true;
  auto worker = warden::Worker::Create(db, options);
  if (!worker) {
    std::fprintf(stderr, "worker: %s\n", worker.error().ToString().c_str());
    return 1;
  }
  (*worker)->Handle("greet", [](warden::JobContext& ctx) {
    ctx.SetResult({{"greeting", "hello, " + ctx.payload()["name"].get<std::string>()}});
    return warden::Status::Ok();
  });
  if (auto s = (*worker)->Run(); !s.ok()) {
    std::fprintf(stderr, "run: %s\n", s.ToString().c_str());
    return 1;
  }

  auto job = (*client)->GetJob(added->id);
  if (!job) {
    std::fprintf(stderr, "get: %s\n", job.error().ToString().c_str());
    return 1;
  }
  std::printf("job %lld %s: %s\n", static_cast<long long>(job->id),
              warden::JobStateName(job->state), job->result.dump().c_str());
  return job->state == warden::JobState::kSucceeded ? 0 : 1;
}
