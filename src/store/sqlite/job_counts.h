// The jobs by queue and state (job_counts, schema 9), kept by the
// statements that change jobs: each adds its net change in its own
// transaction, so the counts are exact at every commit. A statement that
// changes a batch of jobs adds one change per (queue, state) it touched,
// not one per job: the claim and the completions cost two small upserts a
// batch (see schema.cc for why not triggers).
//
// Every statement that inserts, deletes or changes the state of jobs must
// count here; Store::JobCountsVerify and store_test's JobCountsStoreTest
// catch one that does not.
//
// Thread safety: none; used under the store's lock, inside a transaction.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "store/sqlite/sqlite_db.h"
#include "warden/job.h"

namespace warden::sqlite {

class CountChanges {
 public:
  void Add(const std::string& queue, JobState state, int64_t n) {
    if (n != 0) changes_[{queue, state}] += n;
  }
  void Move(const std::string& queue, JobState from, JobState to, int64_t n = 1) {
    if (from == to) return;
    Add(queue, from, -n);
    Add(queue, to, n);
  }
  // Writes the changes in the open transaction and forgets them.
  Status Apply(Db& db);

 private:
  std::map<std::pair<std::string, JobState>, int64_t> changes_;
};

// Counts the jobs of `select` (which yields queue, state, count) as moved
// to state `to`, or as deleted (nullopt), before the statement that moves
// or deletes them, in its transaction. `bind` binds `select`'s parameters.
// For statements that pick their jobs by a condition (promote, expire,
// prune), which are not on a job's usual path.
template <typename Bind>
Status CountSelected(Db& db, const std::string& select, std::optional<JobState> to, Bind bind) {
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db.Prepare(select));
  bind(q);
  CountChanges changes;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    const auto state = ParseJobState(q.Text(1));
    if (!state) return Internal("a job in an unknown state: " + q.Text(1));
    if (to) {
      changes.Move(q.Text(0), *state, *to, q.Int(2));
    } else {
      changes.Add(q.Text(0), *state, -q.Int(2));
    }
  }
  q.Reset();
  return changes.Apply(db);
}

}  // namespace warden::sqlite
