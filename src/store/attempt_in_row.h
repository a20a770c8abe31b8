// The attempt a job row holds itself. Since SQLite's schema 3 (and in the
// in-memory store, which keeps its rows), an attempt gets its own
// `attempts` row only when it ends other than in success, or succeeds with
// a note: the one in progress, and the one that succeeded, are described by
// the job row (worker, lease token, claim time, the start mark's time).
// This adds it to the attempts read from the table, so that a job's
// history reads alike on every backend.
//
// Thread safety: a pure function.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "warden/job.h"

namespace warden {

// `job`: the row as read, with its worker's name; `started_at`: its
// attempt_started_at; `attempts`: its `attempts` rows, by attempt.
inline void AddAttemptInJobRow(const JobInfo& job, std::optional<TimeMs> started_at,
                               std::vector<AttemptInfo>* attempts) {
  if (job.attempt == 0 || !job.worker || !job.started_at) return;
  if (job.state != JobState::kRunning && job.state != JobState::kSucceeded) return;
  const bool succeeded = job.state == JobState::kSucceeded;
  auto last = std::find_if(attempts->begin(), attempts->end(),
                           [&](const AttemptInfo& a) { return a.attempt == job.attempt; });
  if (last == attempts->end()) {
    AttemptInfo a;
    a.attempt = job.attempt;
    a.worker = *job.worker;
    a.worker_name = job.worker_name;
    a.lease_token = job.lease_token;
    a.claimed_at = *job.started_at;
    a.started_at = started_at;
    a.outcome = succeeded ? "succeeded" : "running";
    if (succeeded) a.finished_at = job.finished_at;
    attempts->push_back(std::move(a));
  } else if (last->outcome == "running") {
    // Claimed before SQLite's schema 3, which wrote its row then: what
    // happened since is in the job row.
    if (!last->started_at) last->started_at = started_at;
    if (succeeded) {
      last->outcome = "succeeded";
      last->finished_at = job.finished_at;
    }
  }
}

}  // namespace warden
