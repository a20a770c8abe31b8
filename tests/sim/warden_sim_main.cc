// warden_sim: the protocol simulation from the command line.
//
//   warden_sim --seed N            one seed; its step-by-step trace on failure
//   warden_sim --seeds N --from S  seeds S..S+N-1; one reproduce command per failure
// Options: --mutate NAME (a deliberate bug in the model, see --list),
//          --known-issues LIST (session_cut or all),
//          --trace (print the trace anyway),
//          --keep-going (do not stop at the first failing seed).
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "sim_run.h"

namespace {

using warden::sim::RunOptions;

int Usage(const char* argv0) {
  fmt::print(stderr,
             "usage: {0} --seed N [--mutate NAME] [--known-issues LIST] [--trace]\n"
             "       {0} --seeds N [--from S] [--mutate NAME] [--known-issues LIST] "
             "[--keep-going]\n"
             "       {0} --list\n",
             argv0);
  return 2;
}

int RunOne(const std::string& binary, const RunOptions& options, bool print_trace) {
  RunOptions o = options;
  o.trace = true;
  const warden::sim::RunResult r = warden::sim::RunSeed(o);
  if (!r.ok || print_trace) {
    fmt::print("{}", r.scenario);
    for (const std::string& line : r.trace) fmt::print("{}\n", line);
  }
  if (!r.ok) {
    fmt::print("\n{}", warden::sim::FailureReport(binary, o, r));
    return 1;
  }
  fmt::print(
      "seed {}: ok ({} steps, {:.1f}s simulated, {} self-fenced, {} jobs rescued, {} claimed "
      "ahead, {} refused at exec, {} store clock steps, {} jobs left waiting on the clock)\n",
      o.seed, r.steps, static_cast<double>(r.sim_time) / 1e6, r.self_fenced, r.rescued,
      r.claimed_ahead, r.exec_refused, r.clock_steps, r.waiting_on_clock);
  return 0;
}

int RunMany(const std::string& binary, const RunOptions& options, uint64_t from, int64_t count,
            bool keep_going) {
  const auto start = std::chrono::steady_clock::now();
  int64_t runs = 0, failures = 0, steps = 0, ahead = 0, seeds_ahead = 0, refused = 0;
  int64_t clock_steps = 0, seeds_stepped = 0, waiting = 0;
  for (int64_t i = 0; i < count; ++i) {
    RunOptions o = options;
    o.seed = from + static_cast<uint64_t>(i);
    const warden::sim::RunResult r = warden::sim::RunSeed(o);
    ++runs;
    steps += r.steps;
    ahead += r.claimed_ahead;
    seeds_ahead += r.claimed_ahead > 0 ? 1 : 0;
    refused += r.exec_refused;
    clock_steps += r.clock_steps;
    seeds_stepped += r.clock_steps > 0 ? 1 : 0;
    waiting += r.waiting_on_clock;
    if (!r.ok) {
      ++failures;
      fmt::print("{}", warden::sim::FailureReport(binary, o, r));
      std::fflush(stdout);
      if (!keep_going) break;
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(
      "{} seeds from {}: {} failed; {} steps; {} jobs claimed ahead in {} seeds; {} starts "
      "refused at exec; {} store clock steps in {} seeds ({} jobs left waiting on the clock); "
      "{:.1f}s ({:.0f} seeds/s)\n",
      runs, from, failures, steps, ahead, seeds_ahead, refused, clock_steps, seeds_stepped,
      waiting, secs, secs > 0 ? static_cast<double>(runs) / secs : 0.0);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string binary = argv[0];
  RunOptions options;
  std::optional<uint64_t> seed;
  int64_t seeds = 0;
  uint64_t from = 1;
  bool trace = false, keep_going = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::exit(Usage(argv[0]));
      }
      return argv[++i];
    };
    try {
      if (arg == "--seed") {
        seed = std::stoull(value());
      } else if (arg == "--seeds") {
        seeds = std::stoll(value());
      } else if (arg == "--from") {
        from = std::stoull(value());
      } else if (arg == "--mutate") {
        auto m = warden::sim::ParseMutation(value());
        if (!m) return Usage(argv[0]);
        options.mutation = *m;
      } else if (arg == "--known-issues") {
        auto k = warden::sim::ParseKnownIssues(value());
        if (!k) return Usage(argv[0]);
        options.issues = *k;
      } else if (arg == "--trace") {
        trace = true;
      } else if (arg == "--keep-going") {
        keep_going = true;
      } else if (arg == "--list") {
        fmt::print("mutations:");
        for (auto m : warden::sim::AllMutations()) fmt::print(" {}", warden::sim::MutationName(m));
        fmt::print(
            "\nknown issues: session_cut (or all)\n");
        return 0;
      } else {
        return Usage(argv[0]);
      }
    } catch (const std::exception&) {
      return Usage(argv[0]);
    }
  }
  if (seed) {
    options.seed = *seed;
    return RunOne(binary, options, trace);
  }
  if (seeds > 0) return RunMany(binary, options, from, seeds, keep_going);
  return Usage(argv[0]);
}
