// What a chaos job does, decided by the workload generator and carried in
// the job's payload, so that a command job (warden_chaos_job) and an
// in-process handler (warden_chaos_worker) behave the same way and the
// checker knows what to expect.
//
// A job works through `steps` steps of `step_ms` each, writing a ledger
// `tick` after every step (so a run killed mid-way still shows how long it
// was alive, to within one step). Attempts up to `slow_first` take
// `slow_step_ms` per step instead: long enough to pass the job's timeout.
// Attempts up to `fail_first` fail at the end (exit 1 / an error status).
// With `ckpt_every` > 0 it saves {"step": N} every that many steps and a
// retried attempt resumes from the last saved step.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>

#include "ledger.h"

namespace chaos {

struct JobPlan {
  int n = 0;  // the job's index in the workload
  int steps = 1;
  int step_ms = 20;
  int fail_first = 0;
  int slow_first = 0;
  int slow_step_ms = 0;
  int ckpt_every = 0;

  nlohmann::json ToJson() const;
  // Missing fields keep their defaults.
  static JobPlan FromJson(const nlohmann::json& j);
  // Normal running time of a whole attempt from step 0.
  int NormalMs() const { return steps * step_ms; }
};

// What the job body needs from whoever runs it.
struct JobHooks {
  // Sleeps `ms`; false if the run should stop instead (stop requested,
  // SIGTERM): the body then ends with `end ... term|stopped`.
  std::function<bool(int ms)> sleep;
  // Saves {"step": step}. true: saved (or sent). false: fenced off.
  std::function<bool(int step)> checkpoint;
  const char* stop_detail = "stopped";
  // When the job's code began (the handler's entry, the command's main):
  // the `start` line's time, so that a freeze between then and the line
  // does not make a run look as if it started late. 0: when written.
  int64_t started_ms = 0;
};

enum class BodyResult { kOk, kFail, kStopped, kFenced };

// Runs one attempt: start line, steps with ticks and checkpoints, end line.
// `start_step` is the step to resume from (the saved checkpoint, or 0).
BodyResult RunJobBody(const JobPlan& plan, const RunId& run, int start_step,
                      LedgerWriter& ledger, const JobHooks& hooks);

// The step a checkpoint JSON names (0 for null / malformed).
int CheckpointStep(const nlohmann::json& checkpoint);

}  // namespace chaos
