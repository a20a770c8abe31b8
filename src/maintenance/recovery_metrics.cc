#include "maintenance/recovery_metrics.h"

#include "store/store.h"

namespace warden {

const char* OutcomeOf(JobState next) {
  switch (next) {
    case JobState::kDead:
      return "dead";
    case JobState::kCancelled:
      return "cancelled";
    default:
      return "failed";  // retryable, or available again
  }
}

void CountRecoveries(Metrics& metrics, const std::vector<Recovery>& recoveries) {
  for (const Recovery& r : recoveries) {
    metrics.Count(kJobsRescued, {{"cause", r.cause}});
    metrics.Observe(kRecovery, {{"cause", r.cause}}, static_cast<double>(r.took.count()) / 1000.0);
    metrics.Count(kJobsCompleted, {{"queue", r.queue}, {"outcome", OutcomeOf(r.next)}});
    if (r.kind == ErrorKind::kCrashLoop) {
      metrics.Count(kCrashLoopQuarantines, {{"queue", r.queue}});
    }
  }
}

std::vector<Recovery> RecoveriesOf(const RescueReport& report, const char* cause, Millis took) {
  std::vector<Recovery> out;
  for (const RescuedJob& j : report.jobs) {
    out.push_back(Recovery{j.queue, cause, j.next, j.kind, took});
  }
  return out;
}

}  // namespace warden
