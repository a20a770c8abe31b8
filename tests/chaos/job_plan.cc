#include "job_plan.h"

namespace chaos {

nlohmann::json JobPlan::ToJson() const {
  return {{"n", n},
          {"steps", steps},
          {"step_ms", step_ms},
          {"fail_first", fail_first},
          {"slow_first", slow_first},
          {"slow_step_ms", slow_step_ms},
          {"ckpt_every", ckpt_every}};
}

JobPlan JobPlan::FromJson(const nlohmann::json& j) {
  JobPlan p;
  if (!j.is_object()) return p;
  p.n = j.value("n", p.n);
  p.steps = j.value("steps", p.steps);
  p.step_ms = j.value("step_ms", p.step_ms);
  p.fail_first = j.value("fail_first", p.fail_first);
  p.slow_first = j.value("slow_first", p.slow_first);
  p.slow_step_ms = j.value("slow_step_ms", p.slow_step_ms);
  p.ckpt_every = j.value("ckpt_every", p.ckpt_every);
  return p;
}

int CheckpointStep(const nlohmann::json& checkpoint) {
  if (!checkpoint.is_object()) return 0;
  auto it = checkpoint.find("step");
  return it != checkpoint.end() && it->is_number_integer() ? it->get<int>() : 0;
}

BodyResult RunJobBody(const JobPlan& plan, const RunId& run, int start_step,
                      LedgerWriter& ledger, const JobHooks& hooks) {
  const int step_ms =
      run.attempt <= plan.slow_first ? plan.slow_step_ms : plan.step_ms;
  int step = plan.ckpt_every > 0 ? start_step : 0;
  ledger.Write("start", run, step, "-", hooks.started_ms);
  while (step < plan.steps) {
    if (!hooks.sleep(step_ms)) {
      ledger.Write("end", run, step, hooks.stop_detail);
      return BodyResult::kStopped;
    }
    ++step;
    ledger.Write("tick", run, step);
    if (plan.ckpt_every > 0 && step % plan.ckpt_every == 0 &&
        step < plan.steps) {
      if (!hooks.checkpoint(step)) {
        ledger.Write("end", run, step, "fenced");
        return BodyResult::kFenced;
      }
      ledger.Write("ckpt", run, step);
    }
  }
  const bool fail = run.attempt <= plan.fail_first;
  ledger.Write("end", run, step, fail ? "fail" : "ok");
  return fail ? BodyResult::kFail : BodyResult::kOk;
}

}  // namespace chaos
