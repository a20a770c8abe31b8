#include "store/sqlite/job_counts.h"

namespace warden::sqlite {

Status CountChanges::Apply(Db& db) {
  if (changes_.empty()) return Status::Ok();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt up, db.Prepare("INSERT INTO job_counts (queue, task, command, state, n) VALUES (?1, "
                          "?2, ?3, ?4, ?5) ON CONFLICT (queue, state, task, command) DO UPDATE "
                          "SET n = n + excluded.n"));
  for (const auto& [key, n] : changes_) {
    if (n == 0) continue;
    const JobGroup& g = key.first;
    WARDEN_RETURN_IF_ERROR(up.Bind(1, g.queue)
                               .Bind(2, g.task)
                               .Bind(3, int64_t{g.command})
                               .Bind(4, JobStateName(key.second))
                               .Bind(5, n)
                               .Exec()
                               .status());
    up.Reset();
  }
  changes_.clear();
  return Status::Ok();
}

}  // namespace warden::sqlite
