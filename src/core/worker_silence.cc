#include "warden/worker_silence.h"

#include "warden/duration.h"

namespace warden {

std::optional<Millis> WorkerSilentFor(TimeMs last_heartbeat, Millis keepalive,
                                      TimeMs store_now) {
  const Millis since(store_now - last_heartbeat);
  if (since <= keepalive) return std::nullopt;
  return since;
}

void MarkSilentWorkers(std::vector<WorkerInfo>& workers, TimeMs store_now) {
  for (WorkerInfo& w : workers) {
    const bool live = w.state == WorkerState::kActive || w.state == WorkerState::kDraining;
    w.silent_for =
        live ? WorkerSilentFor(w.last_heartbeat, w.keepalive, store_now) : std::nullopt;
  }
}

std::string SilenceText(const WorkerInfo& w) {
  if (!w.silent_for) return "";
  return "no heartbeat for " + HumanDuration(*w.silent_for) + ", keepalive " +
         FormatDuration(w.keepalive);
}

}  // namespace warden
