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
// so HeldBound(slots) = slots + min(4 × slots, 32) + max(slots, 512).
//
// The allowance is the completer's batch cap (and at least the slots). Two
// reasons. Outcomes waiting for their commit must not count against the
// slots: claiming would then wait for every commit, and the slots idle
// while a batch is written (that cost SQLite a third to a half of its
// throughput at 8 slots). And with the allowance at least one batch, a
// claim loop held back always has a commit to wait for: either a batch is
// being written (its commit wakes the loop), or the outcomes waiting fill a
// whole batch, which the completer writes at once, without its window.
//
// The price: when the commits themselves are the bottleneck (few slots of
// short jobs on a slow disk), a batch being written and the next one
// gathering share the allowance, so two consecutive batches hold at most
// HeldBound(slots) outcomes between them, where an unbounded backlog let
// every batch be full. At 4 slots that is about half the commit-bound
// rate (runtime_sim_test, 2,000 jobs, 300 ms commits: 2.5 s against 1.6 s
// unbounded); from about 500 slots on, or whenever the slots and not the
// commits are the limit, nothing. An allowance of two batches would keep
// the full rate at few slots too, for a bound of about 1,050 there instead
// of about 550.
#pragma once

#include <algorithm>

#include "core/claim_ahead.h"

namespace warden {

// Most outcomes the completer writes in one transaction.
inline constexpr int kCompleterMaxBatch = 512;

// Most outcomes added to the completer and not yet committed before the
// claim loop stops claiming.
inline int UnsettledAllowance(int slots) { return std::max(slots, kCompleterMaxBatch); }

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
