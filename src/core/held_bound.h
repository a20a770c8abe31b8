// How many jobs one worker may hold in state `running` in the store.
//
// A job is the worker's from its claim until its outcome is committed: while
// it waits for a slot (claimed ahead), while its handler runs, and while its
// outcome waits in the completer (runtime/completer.h) for a group commit.
// When the worker dies, every one of them is recovered and run again, so
// their number is what a crash re-runs. It is bounded by the worker's
// configuration, never by how far the store's commits fall behind:
//
//   held (running handlers + claimed ahead)  <= slots + claim-ahead (<= 32)
//   held + unsettled outcomes                <= slots + claim-ahead + allowance
//
// so HeldBound(slots) = slots + min(4 × slots, 32) + max(slots, 2 × 512).
//
// The allowance is two of the completer's batches (and at least the
// slots). Outcomes waiting for their commit must not count against the
// slots: claiming would then wait for every commit, and the slots idle
// while a batch is written (that cost SQLite a third to a half of its
// throughput at 8 slots). And a batch being written and the next one
// gathering share the allowance: with one batch's worth (2026-11-26 to
// 2026-12-06), two consecutive batches held 512 outcomes between them, so
// short jobs were committed about 256 at a time, twice the commits of
// full batches. Two batches' worth lets each be full:
// `bench/ab_throughput.sh` (9 runs each, alternating, 2026-12-06) measured
// +8% at 512 slots on SQLite (109,109 -> 118,171 jobs/s) and +6% on
// PostgreSQL (40,111 -> 42,331), and the commit-bound case of
// runtime_sim_test (4 slots, 300 ms commits) runs at the full rate. The
// price is the bound: 1,064 jobs at 8 slots instead of 552, all of them
// jobs whose code already ran (at-least-once delivery runs them again;
// an at-most-once job is never run twice either way).
#pragma once

#include <algorithm>

#include "core/claim_ahead.h"

namespace warden {

// Most outcomes the completer writes in one transaction.
inline constexpr int kCompleterMaxBatch = 512;

// Most outcomes added to the completer and not yet committed before the
// claim loop stops claiming.
inline int UnsettledAllowance(int slots) { return std::max(slots, 2 * kCompleterMaxBatch); }

// Most jobs one worker holds in state `running` (see above).
inline int HeldBound(int slots) {
  return slots + std::min(slots * kClaimAheadPerSlot, kClaimAheadMax) + UnsettledAllowance(slots);
}

// How many jobs the claim loop may claim now. `budget`: slots + the jobs to
// claim ahead now; `held`: jobs claimed and not yet handed to the completer;
// `unsettled`: outcomes in the completer not yet committed.
inline int ClaimRoom(int slots, int budget, int held, int64_t unsettled) {
  const int64_t total = static_cast<int64_t>(budget) + UnsettledAllowance(slots) - held - unsettled;
  return static_cast<int>(std::min<int64_t>(budget - held, total));
}

}  // namespace warden
