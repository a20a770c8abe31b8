// What one simulation run is asked to do: the seed, an optional mutation
// (a deliberate bug in the simulation's own store or worker model, to prove
// the invariant checks catch it), optional fault kinds that reproduce known
// weaknesses of the production code, and whether to keep a trace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace warden::sim {

// Each switch breaks one rule of the protocol in the model only (never in
// src/): the simulation must then report a violated invariant.
enum class Mutation {
  kNone,
  kCompleteUnfenced,    // store: a completion is accepted whatever its lease token
  kFenceAtFullLease,    // worker: self-fences at the full lease instead of 3/4 of it
  kNoConcurrencyCheck,  // store: claims ignore the concurrency_key of running jobs
  kRescueAmoRetryable,  // store: rescue treats a started at-most-once job as at-least-once
  kHeartbeatForeign,    // store: a heartbeat extends leases of jobs the worker once held
};

const char* MutationName(Mutation m);
std::optional<Mutation> ParseMutation(const std::string& name);
std::vector<Mutation> AllMutations();  // every kind but kNone

// Behaviours of the production code, or faults, that the default runs leave
// out because src/ does not survive them today (see README.md, "Known
// issues"). Each can be switched on to reproduce its finding.
struct KnownIssues {
  // A claim commits but its reply is lost (PostgreSQL: the connection dies
  // after COMMIT): the worker never learns it holds the jobs.
  bool lost_claim_replies = false;
  // The host is suspended: CLOCK_MONOTONIC (steady_clock) stops, so the
  // worker does not see how long it was away.
  bool host_suspend = false;
  // PostgreSQL: a live worker's session is cut and it cannot lock again
  // within the 250 ms confirmation: it is "proven" dead while it runs.
  bool session_cut = false;
  // A command job's `checkpoint` line is saved by a store call made inside
  // the supervisor's loop: while that call hangs, a stop (self-fencing
  // included) is not acted on. Off: the model kills without waiting.
  bool checkpoint_blocks_kill = false;
  // A claim's reply may come later than the lease (a congested link):
  // off, a claim's round trip stays under half the shortest lease.
  bool late_claim_replies = false;
  // Check DESIGN.md's "lease + sweep_interval" even when the frozen or lost
  // worker was the maintenance leader (whose lease lasts 3 sweep intervals).
  bool strict_recovery_bound = false;
  // Fail when a worker whose store was reachable for a whole lease fences a
  // job itself (a liveness problem, not a safety one): a job whose lease is
  // shorter than the worker's is claimed while the heartbeat loop sleeps
  // the worker's (longer) interval.
  bool short_lease_self_fence = false;
  // Execute checks self-fencing before the at-most-once start mark but not
  // after it: a worker frozen while the mark was in flight starts the job
  // when it thaws, though its lease is long gone. Off: the model checks
  // again after the mark.
  bool start_after_thaw = false;
  bool any() const {
    return lost_claim_replies || host_suspend || session_cut || checkpoint_blocks_kill ||
           late_claim_replies || strict_recovery_bound || short_lease_self_fence ||
           start_after_thaw;
  }
};

std::optional<KnownIssues> ParseKnownIssues(const std::string& comma_list);
std::string KnownIssuesFlag(const KnownIssues& f);  // "" when none

struct RunOptions {
  uint64_t seed = 1;
  Mutation mutation = Mutation::kNone;
  KnownIssues issues;
  bool trace = false;  // keep a line per step (printed on failure)
};

// The one command line that reproduces a run: `<binary> --seed N [...]`.
std::string ReproCommand(const std::string& binary, const RunOptions& o);

}  // namespace warden::sim
