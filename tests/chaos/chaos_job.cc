// warden_chaos_job LEDGER: the body of every chaos command job.
//
// Run by `warden worker` as the job's command (`exec warden_chaos_job
// LEDGER`): reads its plan from the payload on stdin and its identity from
// WARDEN_JOB_ID / WARDEN_ATTEMPT / WARDEN_LEASE_TOKEN / WARDEN_WORKER_ID,
// resumes from WARDEN_CHECKPOINT, sends checkpoints on WARDEN_CONTROL_FD,
// and records every step in the ledger. On SIGTERM (a timeout or a stop) it
// writes `end ... term` and exits 143; SIGKILL leaves the last tick as the
// evidence of how long it ran.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>

#include "job_plan.h"

namespace {

volatile sig_atomic_t g_terminated = 0;

void OnTerm(int) { g_terminated = 1; }

int64_t EnvInt(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : 0;
}

// Sleeps `ms` unless SIGTERM arrives first.
bool Sleep(int ms) {
  timespec left{ms / 1000, (ms % 1000) * 1'000'000L};
  while (!g_terminated) {
    if (nanosleep(&left, &left) == 0) return true;
    if (errno != EINTR) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t entered = chaos::WallMs();
  if (argc != 2) {
    std::fprintf(stderr,
                 "usage: warden_chaos_job LEDGER (run by warden worker)\n");
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = OnTerm;
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const std::string payload{std::istreambuf_iterator<char>(std::cin), {}};
  const chaos::JobPlan plan =
      chaos::JobPlan::FromJson(nlohmann::json::parse(payload, nullptr, false));
  const chaos::RunId run{
      EnvInt("WARDEN_JOB_ID"), static_cast<int>(EnvInt("WARDEN_ATTEMPT")),
      EnvInt("WARDEN_LEASE_TOKEN"), EnvInt("WARDEN_WORKER_ID")};
  const char* saved = std::getenv("WARDEN_CHECKPOINT");
  const int start_step = chaos::CheckpointStep(
      nlohmann::json::parse(saved ? saved : "", nullptr, false));
  const int control_fd = static_cast<int>(EnvInt("WARDEN_CONTROL_FD"));

  chaos::LedgerWriter ledger(argv[1]);
  chaos::JobHooks hooks;
  hooks.sleep = Sleep;
  hooks.stop_detail = "term";
  hooks.started_ms = entered;
  hooks.checkpoint = [control_fd](int step) {
    const std::string line =
        "checkpoint {\"step\":" + std::to_string(step) + "}\n";
    // Fencing is the worker's business: a refused checkpoint gets us killed.
    (void)!write(control_fd, line.data(), line.size());
    return true;
  };
  switch (chaos::RunJobBody(plan, run, start_step, ledger, hooks)) {
    case chaos::BodyResult::kOk:
      return 0;
    case chaos::BodyResult::kFail:
      return 1;
    case chaos::BodyResult::kStopped:
    case chaos::BodyResult::kFenced:
      break;
  }
  return 143;
}
