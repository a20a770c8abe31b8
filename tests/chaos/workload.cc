#include "workload.h"

#include "rng.h"

namespace chaos {
namespace {

constexpr int kKeys = 6;

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

JobPlan MakePlan(Rng& r, int n) {
  JobPlan p;
  p.n = n;
  const double size = r.Unit();
  if (size < 0.77) {  // short
    p.steps = static_cast<int>(r.Range(1, 4));
    p.step_ms = static_cast<int>(r.Range(10, 50));
  } else if (size < 0.97) {  // medium
    p.steps = static_cast<int>(r.Range(4, 10));
    p.step_ms = static_cast<int>(r.Range(60, 100));
  } else {  // long: likely to be running when a fault strikes
    p.steps = static_cast<int>(r.Range(15, 30));
    p.step_ms = static_cast<int>(r.Range(100, 120));
  }
  if (p.steps >= 4 && r.Chance(0.35))
    p.ckpt_every = static_cast<int>(r.Range(2, 3));
  const double fate = r.Unit();
  if (fate < 0.12) {
    p.fail_first = static_cast<int>(r.Range(1, 2));
  } else if (fate < 0.20 && p.NormalMs() <= 1000) {
    p.slow_first = 1;
  }
  return p;
}

}  // namespace

std::vector<PlannedJob> MakeWorkload(const WorkloadParams& params) {
  Rng r = Rng(params.seed).Fork(1);
  // A stream of its own: a seed gives every job the same plan, key, delay
  // and enqueue time with the limited queue as without it.
  Rng queues = Rng(params.seed).Fork(3);
  const std::string command =
      "exec " + Quote(params.job_bin) + " " + Quote(params.ledger);
  std::vector<PlannedJob> out;
  out.reserve(static_cast<size_t>(params.jobs));
  const int upfront = params.jobs * 3 / 10;
  const int64_t feed_ms = params.window_ms * 7 / 10;
  for (int n = 0; n < params.jobs; ++n) {
    PlannedJob j;
    j.plan = MakePlan(r, n);
    j.command = r.Chance(0.5);
    warden::JobSpec& s = j.spec;
    s.queue = params.queue;
    if (queues.Chance(kLimitedShare) && !params.limited_queue.empty()) {
      s.queue = params.limited_queue;
    }
    s.task = j.command ? "chaos-cmd" : "chaos-inproc";
    if (j.command) s.command = command;
    s.payload = j.plan.ToJson();
    s.priority = static_cast<int>(r.Range(0, 2));
    // An enqueue retried after a commit whose outcome was unknown (a
    // restart mid-commit) must not add the job twice.
    s.unique_key = "chaos-" + std::to_string(n);
    if (r.Chance(0.2)) s.delivery = warden::Delivery::kAtMostOnce;
    const double policy = r.Unit();
    if (policy < 0.08) {
      s.retry = warden::RetryPolicy::kNone;
    } else if (policy < 0.16) {
      s.retry = warden::RetryPolicy::kForever;
    }
    if (r.Chance(0.15))
      s.concurrency_key = "key-" + std::to_string(r.Range(0, kKeys - 1));
    if (r.Chance(0.05)) s.delay = warden::Millis(r.Range(200, 3000));
    if (j.plan.slow_first > 0) {
      // Normal attempts finish well within the timeout; slow ones take
      // twice the timeout and are stopped at it.
      const int timeout =
          j.plan.NormalMs() + static_cast<int>(r.Range(1500, 2500));
      s.timeout = warden::Millis(timeout);
      j.plan.slow_step_ms = 2 * timeout / j.plan.steps + 1;
      s.payload = j.plan.ToJson();
    } else {
      s.timeout = warden::Millis(3 * j.plan.NormalMs() + 10'000);
    }
    j.enqueue_at_ms = n < upfront ? 0 : r.Range(0, feed_ms);
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace chaos
