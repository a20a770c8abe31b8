// Seeded runs of warden's real worker runtime (runtime_sim.h): 2-3 workers
// on one host, jobs at-least-once and at-most-once, some failing their
// first attempt; workers killed and restarted under their names, frozen and
// thawed, replies lost, the store's wall clock stepped. Checked: no job's
// code starts unless the store still names its attempt's lease; after each
// run, every job ended (succeeded or dead), none succeeded twice, no
// at-most-once job started twice, and no worker that was neither frozen
// nor killed was declared dead.
//
//   WARDEN_RUNTIME_SIM_SEEDS=N  how many seeds (default 100)
//   WARDEN_RUNTIME_SIM_SEED=S   only seed S, with both workers' logs
//   WARDEN_RUNTIME_SIM_MUTANT=NAME  this binary runs a deliberately broken
//                               src/runtime (tests/sim/CMakeLists.txt): it
//                               passes once a seed fails with a check
//                               containing WARDEN_RUNTIME_SIM_MUTANT_CATCH
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "prng.h"
#include "runtime_sim.h"

namespace warden::sim {
namespace {

struct SeedResult {
  std::string failures;  // empty: every check held
  std::string logs;
  int jobs = 0, kills = 0, freezes = 0, steps = 0;
  int64_t turns = 0;
};

SeedResult RunSeed(uint64_t seed) {
  SeedResult out;
  Rng rng(Mix(seed, 0x51ed));
  RuntimeSim sim(seed, "memory:runtime-seed-" + std::to_string(seed));

  WorkerOptions o;
  o.heartbeat = Millis(rng.Range(200, 1000));
  o.lease = o.heartbeat * rng.Range(3, 6);
  o.keepalive_threshold = o.lease;
  o.sweep_interval = Millis(rng.Range(200, 1000));
  o.poll_interval = Millis(1000);
  o.shutdown_timeout = Millis(5000);

  out.jobs = static_cast<int>(rng.Range(5, 25));
  std::vector<JobSpec> specs(static_cast<size_t>(out.jobs));
  std::set<JobId> at_most_once;
  for (size_t i = 0; i < specs.size(); ++i) {
    JobSpec& s = specs[i];
    s.task = "work";
    s.payload = Json{{"ms", rng.Range(0, 3000)}, {"fail_first", rng.Percent(20)}};
    if (rng.Percent(20)) {
      s.delivery = Delivery::kAtMostOnce;
      at_most_once.insert(static_cast<JobId>(i + 1));
    }
    s.max_attempts = 10;
  }
  sim.Enqueue(specs);

  const int workers = static_cast<int>(rng.Range(2, 3));
  int next_pid = 100;
  std::set<std::string> faulted;  // names of workers frozen or killed
  std::map<std::string, SimWorkerProcess*> by_name;
  for (int i = 0; i < workers; ++i) {
    WorkerOptions w = o;
    w.concurrency = static_cast<int>(rng.Range(1, 4));
    w.name = "w" + std::to_string(i);
    by_name[w.name] = &sim.StartWorker(++next_pid, w);
  }

  // Faults in the first 20 s.
  constexpr VirtUs kFaultsUntil = 20 * kSecond;
  const int faults = static_cast<int>(rng.Range(0, 4));
  for (int f = 0; f < faults; ++f) {
    const VirtUs at = rng.Range(0, kFaultsUntil);
    const std::string name = "w" + std::to_string(rng.Range(0, workers - 1));
    switch (rng.Range(0, 3)) {
      case 0: {  // SIGKILL, and a restart under the same name
        ++out.kills;
        const VirtUs back = at + rng.Range(kSecond / 2, 3 * kSecond);
        const int concurrency = static_cast<int>(rng.Range(1, 4));
        sim.sched().At(at, [&, name] {
          SimWorkerProcess* p = by_name[name];
          if (p == nullptr || p->env->killed()) return;
          faulted.insert(name);
          sim.Kill(*p);
        });
        sim.sched().At(back, [&, name, concurrency] {
          SimWorkerProcess* p = by_name[name];
          if (p == nullptr || !p->env->killed()) return;
          WorkerOptions w = o;
          w.concurrency = concurrency;
          w.name = name;
          by_name[name] = &sim.StartWorker(++next_pid, w);
        });
        break;
      }
      case 1: {  // frozen (SIGSTOP, a paused VM), then thawed
        ++out.freezes;
        const VirtUs length = rng.Range(kSecond / 2, 15 * kSecond);
        // Half the freezes come as a claim's reply arrives, with jobs
        // claimed and not yet started: the start gate's moment.
        const bool at_claim = rng.Percent(50);
        sim.sched().At(at, [&, name, length, at_claim] {
          SimWorkerProcess* p = by_name[name];
          if (p == nullptr || p->env->killed()) return;
          auto freeze = [&sim, &faulted, name, length, p] {
            faulted.insert(name);
            sim.sched().Freeze(p->env->group());
            sim.sched().At(sim.sched().now() + length,
                           [&sim, p] { sim.sched().Thaw(p->env->group()); });
          };
          if (!at_claim) {
            freeze();
            return;
          }
          p->link->on_reply = [p, freeze](const std::string& method) {
            if (method != "JobClaim") return;
            auto now = freeze;  // this closure goes with the next line
            p->link->on_reply = nullptr;
            now();
          };
        });
        break;
      }
      case 2: {  // replies lost for a while
        const int percent = static_cast<int>(rng.Range(1, 10));
        const VirtUs until = at + rng.Range(kSecond, 10 * kSecond);
        sim.sched().At(at, [&, name, percent] {
          if (SimWorkerProcess* p = by_name[name]) p->link->lose_reply_percent = percent;
        });
        sim.sched().At(until, [&, name] {
          if (SimWorkerProcess* p = by_name[name]) p->link->lose_reply_percent = 0;
        });
        break;
      }
      default: {  // the store's wall clock steps: back by up to 30 s, or on by up to 6 h
        ++out.steps;
        const int64_t ms = rng.Percent(50) ? -rng.Range(300, 30'000)
                                           : rng.Range(300, 6LL * 3600 * 1000);
        sim.sched().At(at, [&, ms] { sim.db_clock().StepWall(ms); });
        break;
      }
    }
  }

  auto check = [&](bool ok, const std::string& what) {
    if (!ok) out.failures += what + "\n";
  };
  const bool ended = [&] {
    for (VirtUs t = 0; t < 600 * kSecond; t += kSecond / 2) {
      sim.sched().RunUntil(t);
      if (t > kFaultsUntil + 15 * kSecond &&
          sim.Count(JobState::kSucceeded) + sim.Count(JobState::kDead) == out.jobs) {
        return true;
      }
    }
    return false;
  }();
  check(ended, "not every job ended within 600 s: " +
                   std::to_string(sim.Count(JobState::kSucceeded)) + " succeeded, " +
                   std::to_string(sim.Count(JobState::kDead)) + " dead of " +
                   std::to_string(out.jobs));
  for (JobId id = 1; id <= out.jobs; ++id) {
    const auto job = sim.admin().JobGet(id);
    if (!job.has_value()) {
      check(false, "job " + std::to_string(id) + ": " + job.error().ToString());
      continue;
    }
    int succeeded = 0;
    for (const AttemptInfo& a : job->attempts) succeeded += a.outcome == "succeeded";
    check(succeeded <= 1, "job " + std::to_string(id) + " succeeded " +
                              std::to_string(succeeded) + " times");
    if (at_most_once.count(id)) {
      auto s = sim.starts().find(id);
      const int starts = s == sim.starts().end() ? 0 : s->second;
      check(starts <= 1, "at-most-once job " + std::to_string(id) + " started " +
                             std::to_string(starts) + " times");
    }
  }
  for (const std::string& start : sim.unheld_starts()) check(false, start);
  for (auto& p : sim.workers()) {
    const std::string name = p->worker->name();
    const bool declared = p->log.find("was declared dead") != std::string::npos;
    check(faulted.count(name) || !declared,
          name + " was declared dead, though neither frozen nor killed");
    out.logs += "---- " + name + " (pid " + std::to_string(p->env->Host().pid) + ")\n" + p->log;
  }
  sim.StopAll();
  out.turns = sim.sched().turns();
  return out;
}

int64_t EnvNumber(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v == nullptr || *v == '\0' ? fallback : std::atoll(v);
}

TEST(RuntimeSeedsTest, InvariantsHoldOnEverySeed) {
  const int64_t only = EnvNumber("WARDEN_RUNTIME_SIM_SEED", 0);
  const int64_t seeds = only ? 1 : EnvNumber("WARDEN_RUNTIME_SIM_SEEDS", 100);
  const char* mutant = std::getenv("WARDEN_RUNTIME_SIM_MUTANT");
  const char* catch_text = std::getenv("WARDEN_RUNTIME_SIM_MUTANT_CATCH");
  int failed = 0, kills = 0, freezes = 0, steps = 0, jobs = 0;
  int64_t turns = 0;
  for (int64_t i = 0; i < seeds; ++i) {
    const uint64_t seed = only ? static_cast<uint64_t>(only) : static_cast<uint64_t>(i + 1);
    const SeedResult r = RunSeed(seed);
    kills += r.kills;
    freezes += r.freezes;
    steps += r.steps;
    jobs += r.jobs;
    turns += r.turns;
    if (only) std::cout << r.logs;
    // Caught by the check the break is for: any other failure is a failure.
    if (mutant != nullptr && catch_text != nullptr &&
        r.failures.find(catch_text) != std::string::npos) {
      std::cout << "mutant " << mutant << " caught by seed " << seed << ":\n" << r.failures;
      return;
    }
    if (!r.failures.empty() && ++failed <= 5) {
      ADD_FAILURE() << "seed " << seed << ":\n" << r.failures
                    << "replay: WARDEN_RUNTIME_SIM_SEED=" << seed
                    << " runtime_sim_test --gtest_filter='RuntimeSeedsTest.*'";
    }
  }
  std::cout << seeds << " seeds: " << jobs << " jobs, " << kills << " kills, " << freezes
            << " freezes, " << steps << " store clock steps; " << turns << " turns; " << failed << " failed\n";
  if (mutant != nullptr) ADD_FAILURE() << "no seed caught the mutant " << mutant;
}

}  // namespace
}  // namespace warden::sim
