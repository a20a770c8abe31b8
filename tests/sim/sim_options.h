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
  kStartNeedsWorker,    // worker: a job's process begins its work only once its worker writes
                        // its stdin, with no deadline check of its own (before the fix)
  kRescueByWallClock,   // sweeper: a lease is silent once expires_at < the store's now (the
                        // old rule), not once watched unchanged for its length
  kPresumeByWallClock,  // sweeper: a worker is presumed dead once its heartbeat is older than
                        // the keepalive by the store's now (the old rule)
  kPassStartSightings,  // sweeper: rows first seen in a pass are stamped with the pass's start,
                        // not when their read returned (src/ before the fix)
};

const char* MutationName(Mutation m);
std::optional<Mutation> ParseMutation(const std::string& name);
std::vector<Mutation> AllMutations();  // every kind but kNone

// Behaviours of the production code, or faults, that the default runs leave
// out because src/ does not survive them today (see README.md, "Known
// issues"). Each can be switched on to reproduce its finding.
struct KnownIssues {
  // PostgreSQL: a live worker's session is cut and it cannot lock again
  // within the 250 ms confirmation: it is "proven" dead while it runs.
  bool session_cut = false;
  bool any() const { return session_cut; }
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
