// The jobs by queue, task, command or not, and state (job_counts: by queue
// and state since schema 9, by task and command too since schema 11), kept
// by the statements that change jobs: each adds its net change in its own
// transaction, so the counts are exact at every commit. A statement that
// changes a batch of jobs adds one change per group and state it touched,
// not one per job: the claim and the completions cost two small upserts a
// batch of one task (see migrations/sqlite/0009_job_counts.sql for why not triggers).
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

// What decides which workers can run a job: a row of job_counts per group
// and state.
struct JobGroup {
  std::string queue;
  std::string task;
  bool command = false;  // command <> ''
  auto operator<=>(const JobGroup&) const = default;
};

// The group columns of a job, as CountSelected's selects and the readers
// name them.
#define WARDEN_GROUP_COLUMNS "queue, task, command <> ''"

class CountChanges {
 public:
  void Add(const JobGroup& group, JobState state, int64_t n) {
    if (n != 0) changes_[{group, state}] += n;
  }
  void Move(const JobGroup& group, JobState from, JobState to, int64_t n = 1) {
    if (from == to) return;
    Add(group, from, -n);
    Add(group, to, n);
  }
  // Writes the changes in the open transaction and forgets them.
  Status Apply(Db& db);

 private:
  std::map<std::pair<JobGroup, JobState>, int64_t> changes_;
};

// Counts the jobs of `select` (which yields WARDEN_GROUP_COLUMNS, state,
// count) as moved
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
    const auto state = ParseJobState(q.Text(3));
    if (!state) return Internal("a job in an unknown state: " + q.Text(3));
    const JobGroup group{q.Text(0), q.Text(1), q.Int(2) != 0};
    if (to) {
      changes.Move(group, *state, *to, q.Int(4));
    } else {
      changes.Add(group, *state, -q.Int(4));
    }
  }
  q.Reset();
  return changes.Apply(db);
}

}  // namespace warden::sqlite
