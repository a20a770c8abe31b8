#include "store/sqlite/job_counts.h"

namespace warden::sqlite {

Status CountChanges::Apply(Db& db) {
  if (changes_.empty()) return Status::Ok();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt up, db.Prepare("INSERT INTO job_counts (queue, state, n) VALUES (?1, ?2, ?3) "
                          "ON CONFLICT (queue, state) DO UPDATE SET n = n + excluded.n"));
  for (const auto& [key, n] : changes_) {
    if (n == 0) continue;
    WARDEN_RETURN_IF_ERROR(
        up.Bind(1, key.first).Bind(2, JobStateName(key.second)).Bind(3, n).Exec().status());
    up.Reset();
  }
  changes_.clear();
  return Status::Ok();
}

}  // namespace warden::sqlite
