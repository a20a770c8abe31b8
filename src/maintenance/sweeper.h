// The sweeper: one maintenance pass (docs/design.md, "Sweeper"). Run by the
// worker holding the `sweeper` leader lease every sweep_interval (see
// maintainer.h), and by `warden sweep`. Every step is one conditional
// statement, so two sweepers running at once are harmless.
//
// Order matters: proven deaths first (their jobs are recovered at once),
// then presumed deaths (marked only: their leases, not the presumption, free
// their jobs), then silent leases, start deadlines, promotion and pruning.
// Silence is judged by watching (core/silence.h), never by comparing
// wall-clock readings: a judge that has watched for less than a lease finds
// nothing silent yet.
//
// Thread safety: stateless functions; the Store decides.
#pragma once

#include <string>

#include "core/silence.h"
#include "env/env.h"
#include "store/store.h"
#include "warden/client.h"  // SweepSummary: what a pass did

namespace warden {

struct SweepOptions {
  Millis keepalive_threshold{10'000};
  bool prune = false;
  bool prove_deaths = true;  // false when the caller already did
  Millis retention{7LL * 24 * 3600 * 1000};
};

// Whether a live-registered worker on this host is provably gone, and why.
// Empty: not provable (alive, or on another host).
// Proof needs this host (same name), and either a different boot (the host
// rebooted: assumes host names are unique per machine) or, in our pid
// namespace, the exact process gone. A worker in another container (another
// pid namespace) is never proven dead from here.
// `env`: this host (Env::Host) and its processes.
std::string ProofOfDeath(const WorkerLiveness& w, Env& env);
// The converse, for operators about to declare a worker dead by hand: why
// it is certainly alive ("process 123 on box-1 is running"), or empty when
// that cannot be shown from here (another host, another boot or container,
// or the process gone).
std::string ProofOfLife(const WorkerLiveness& w, Env& env);

// One pass. `judge` has begun this pass (SilenceJudge::BeginPass, after
// `live` was read: WorkerListLive("")) and is ended by the caller; `env`'s
// clock stamps the leases this pass reads when they arrive.
Result<SweepSummary> SweepOnce(Store& store, const SweepOptions& options, SilenceJudge& judge,
                               Env& env, const std::vector<WorkerLiveness>& live);

// The live workers whose heartbeats `judge` has seen unchanged for
// `keepalive`. Every worker watches them each pass, leader or not, so a
// worker that becomes the leader has watched them all along.
std::vector<WorkerLiveness> SilentWorkers(SilenceJudge& judge,
                                          const std::vector<WorkerLiveness>& live,
                                          Millis keepalive);

// Store::WorkerDeclareDead, tried again while it reports the worker's row
// busy (PostgreSQL: a claim of that worker holds it; the server ends a
// frozen transaction within 1 s), for up to `patience`. For callers that
// must not give up on a first refusal: a worker taking over its own name,
// an operator's `workers release`. The sweeper does not wait: its next
// pass tries again.
inline constexpr Millis kDeclareDeadPatience{5'000};
Result<RescueReport> DeclareDeadPatiently(Store& store, const Clock& clock, WorkerId id,
                                          const std::string& reason, LossCause cause,
                                          const AuditEntry* audit,
                                          Millis patience = kDeclareDeadPatience);

// A lost database session (PostgreSQL: the worker's session lock is gone)
// is proof of death once it stays lost for kSessionLossConfirm: a live
// worker whose connection was merely cut reconnects and locks again within
// milliseconds. Returns the suspects (workers named `name`, or any if
// empty) still lost after that wait without having locked again meanwhile
// (same session epoch): two sightings of two different losses prove
// nothing.
inline constexpr Millis kSessionLossConfirm{250};
inline constexpr const char* kSessionLostProof =
    "its database session ended (process gone, or its host cut off past its lease)";
Result<std::vector<WorkerId>> ConfirmSessionsLost(Store& store, const Clock& clock,
                                                  const std::vector<WorkerLiveness>& suspects,
                                                  const std::string& name);

// Declares dead every worker of `live` (live-registered workers) that is
// on this host and whose process is gone, or whose database session was
// lost (confirmed, see above).
Result<SweepSummary> DeclareProvenDead(Store& store, Env& env,
                                       const std::vector<WorkerLiveness>& live);

}  // namespace warden
