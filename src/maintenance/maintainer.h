// Maintainer: one worker's share of maintenance, one pass at a time. The
// runtime calls Pass every sweep_interval (and at once when its DeathWatch
// sees a worker process exit); a test or a simulation can call it as a step.
//
// Each pass, leader or not, it proves deaths on its own host (a killed
// worker's jobs never wait for a leader that may itself be frozen or dead)
// and watches the live workers' heartbeats, the running jobs' leases and
// the leader's renewals (so that whichever worker becomes the leader has
// watched them all along, see core/silence.h). The worker holding the
// `sweeper` role also sweeps. Watching costs each worker one read of the
// running jobs per pass.
//
// Thread safety: used by one thread.
#pragma once

#include <optional>
#include <vector>

#include "core/clock.h"
#include "core/silence.h"
#include "env/env.h"
#include "maintenance/sweeper.h"
#include "store/store.h"

namespace warden {

// The name of the maintenance leader's lease (Store::LeaderRead).
inline constexpr const char kMaintenanceRole[] = "sweeper";

struct MaintainerOptions {
  Millis sweep_interval{1000};
  Millis lease{10'000};
  Millis keepalive_threshold{10'000};
  Millis retention{7LL * 24 * 3600 * 1000};
};

struct MaintenancePass {
  SweepSummary proven;                // deaths proven on this host
  std::optional<SweepSummary> swept;  // the sweep, when this worker leads
  std::optional<bool> now_leader;     // set when leadership changed
  std::vector<WorkerLiveness> live;   // the live workers, as read this pass
  // Not ok: the pass stopped there; what it did before (above) stands.
  Status status;
};

class Maintainer {
 public:
  // `env`: its clock, and this host's processes (proofs of death).
  Maintainer(Store& store, Env& env, const MaintainerOptions& options);

  // `self`: this worker's id (it changes when the worker registers again).
  MaintenancePass Pass(WorkerId self);

  // Short, so a frozen leader delays the silence-based part of maintenance
  // by little; renewals are cheap (one write per few sweeps). Never longer
  // than a job lease: a frozen leader's role then passes on before the
  // leases it would have judged are due, and recovery stays within lease +
  // two sweep intervals however the two are set.
  Millis leader_ttl() const { return std::min(options_.sweep_interval * 3, options_.lease); }

 private:
  Result<bool> Lead(WorkerId self);

  Store& store_;
  Env& env_;
  const Clock& clock_;  // env_'s
  MaintainerOptions options_;
  SilenceJudge judge_;
  bool leader_ = false;
  int64_t renew_at_mono_ = 0;
  std::optional<int64_t> last_prune_mono_;
};

}  // namespace warden
