// SqliteStore: the finish path: fenced writes, successes, failures, batches, checkpoints.
#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/node_preference.h"
#include "core/retry.h"
#include "store/sqlite/batch_ids.h"
#include "store/sqlite/job_counts.h"
#include "store/sqlite/rows.h"
#include "store/sqlite/sqlite_store.h"
#include "warden/text.h"

namespace warden::sqlite {

// The tokens are compared in C++: matching [id, token] pairs in SQL parsed
// each pair's JSON again, and cost twice this read (0.86 against 0.39 µs a
// job in Python, 512 jobs a statement).
// The group too, for the job counts (job_counts.h): the row is read anyway.
const char* const kFencePlainSql = "SELECT id, lease_token, " WARDEN_GROUP_COLUMNS
                                   " FROM jobs WHERE id IN (SELECT value FROM json_each(?1)) "
                                   "AND state = 'running'";

const char* const kSucceedPlainSql =
    "UPDATE jobs SET state = 'succeeded', result = NULL, finished_at = ?1, "
    "lease_expires_at = NULL WHERE id IN (SELECT value FROM json_each(?2)) "
    "AND state = 'running'";

Status SqliteStore::LogFenced(const JobRef& ref, WorkerId worker, const char* what,
                              TimeMs now) {
  WARDEN_ASSIGN_OR_RETURN(
      Stmt ins, db_->Prepare("INSERT INTO fenced_writes (job_id, lease_token, worker_id, at, "
                             "what) VALUES (?, ?, ?, ?, ?)"));
  return ins.Bind(1, ref.id)
      .Bind(2, ref.lease_token)
      .Bind(3, worker)
      .Bind(4, now)
      .Bind(5, what)
      .Exec()
      .status();
}

Result<bool> SqliteStore::SucceedLocked(const JobOutcome& o, TimeMs now, CountChanges* counts) {
  // Fenced by the UPDATE itself, and no RETURNING (see JobClaim: SQLite's
  // RETURNING is a trigger with a statement journal, and costs more than
  // the rest of the completion). The job row keeps the succeeded attempt:
  // no `attempts` row (migrations/sqlite/0003_attempt_in_the_job_row.sql).
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE jobs SET state = 'succeeded', result = ?, finished_at = ?, "
                             "lease_expires_at = NULL WHERE id = ? AND lease_token = ? AND "
                             "state = 'running'"));
  if (o.result.is_null()) {
    upd.BindNull(1);
  } else {
    upd.Bind(1, JsonText(o.result));
  }
  WARDEN_ASSIGN_OR_RETURN(
      int changed, upd.Bind(2, now).Bind(3, o.ref.id).Bind(4, o.ref.lease_token).Exec());
  if (changed != 1) return false;
  WARDEN_ASSIGN_OR_RETURN(
      Stmt group, db_->Prepare("SELECT " WARDEN_GROUP_COLUMNS " FROM jobs WHERE id = ?"));
  WARDEN_ASSIGN_OR_RETURN(bool found, group.Bind(1, o.ref.id).Step());
  if (!found) return Internal("a completed job vanished under the write lock");
  counts->Move(JobGroup{group.Text(0), group.Text(1), group.Int(2) != 0}, JobState::kRunning,
               JobState::kSucceeded);
  group.Reset();
  if (o.note.empty()) return true;
  // A success with a note is the one success that gets an `attempts` row:
  // the note is kept in its stderr_tail, as a failure's are.
  WARDEN_ASSIGN_OR_RETURN(
      Stmt att,
      db_->Prepare("INSERT INTO attempts (job_id, attempt, worker_id, lease_token, claimed_at, "
                   "started_at, outcome, finished_at, stderr_tail) "
                   "SELECT id, attempt, worker_id, lease_token, coalesce(started_at, ?1), "
                   "attempt_started_at, 'succeeded', ?1, ?2 FROM jobs WHERE id = ?3 "
                   "ON CONFLICT (job_id, attempt) DO UPDATE SET outcome = 'succeeded', "
                   "finished_at = ?1, stderr_tail = ?2"));
  WARDEN_RETURN_IF_ERROR(att.Bind(1, now).Bind(2, o.note).Bind(3, o.ref.id).Exec().status());
  return true;
}

Result<bool> SqliteStore::FailLocked(WorkerId worker, const JobOutcome& o, TimeMs now,
                                     RescuedJob* rescued) {
  (void)worker;
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT delivery, started_mark, retry, charged, max_attempts, "
                           "crashes, max_crashes, attempt, cancel_requested, worker_id, "
                           "started_at, attempt_started_at, " WARDEN_GROUP_COLUMNS " FROM jobs "
                           "WHERE id = ? AND lease_token = ? AND state = 'running'"));
  q.Bind(1, o.ref.id).Bind(2, o.ref.lease_token);
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return false;
  FailureInput in;
  in.kind = o.error.kind;
  in.delivery = ParseDelivery(q.Text(0)).value_or(Delivery::kAtLeastOnce);
  in.started_mark = q.Int(1) != 0;
  in.retry = ParseRetryPolicy(q.Text(2)).value_or(RetryPolicy::kDefault);
  in.charged = static_cast<int>(q.Int(3));
  in.max_attempts = static_cast<int>(q.Int(4));
  in.crashes = static_cast<int>(q.Int(5));
  in.max_crashes = static_cast<int>(q.Int(6));
  in.lost_by = o.lost_by;
  const int64_t attempt = q.Int(7);
  // An operator's cancel wins over however the attempt ended (a job whose
  // worker died before it could stop it must not be retried).
  if (q.Int(8) != 0) in.kind = ErrorKind::kCancelled;
  const int64_t claimed_by = q.Int(9);
  const int64_t claimed_at = q.OptInt(10).value_or(now);
  const std::optional<int64_t> attempt_started_at = q.OptInt(11);
  const JobGroup group{q.Text(12), q.Text(13), q.Int(14) != 0};
  const std::string& queue = group.queue;
  q.Reset();

  const FailureDecision d = DecideFailure(in, Jitter());
  if (rescued) *rescued = RescuedJob{o.ref.id, queue, d.next, d.kind};
  CountChanges counts;  // applied below, if the UPDATE changed the row
  const bool terminal = IsTerminal(d.next);
  std::optional<std::string> avoid;
  if (LossPrefersAnotherNode(o.error.kind, o.lost_by, d.next)) {
    WARDEN_ASSIGN_OR_RETURN(avoid, NodeToAvoidLocked(claimed_by, group));
  }
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd,
      // A retry without backoff keeps its place in line (its old run_at), so
      // a rescued job runs next instead of behind the whole backlog.
      db_->Prepare("UPDATE jobs SET state = ?1, run_at = CASE WHEN ?2 > 0 THEN ?3 + ?2 ELSE "
                   "run_at END, charged = charged + ?4, "
                   "crashes = crashes + ?5, last_error = ?6, finished_at = ?7, "
                   "lease_expires_at = NULL, cancel_requested = 0, avoid_node = ?10, "
                   "avoid_until = ?11 WHERE id = ?8 AND lease_token = ?9 AND state = 'running'"));
  upd.Bind(1, JobStateName(d.next))
      .Bind(2, static_cast<int64_t>(d.delay.count()))
      .Bind(3, now)
      .Bind(4, d.charge ? 1 : 0)
      .Bind(5, d.count_crash ? 1 : 0)
      .Bind(6, ErrorKindName(d.kind))
      .Bind(7, terminal ? std::optional<int64_t>(now) : std::nullopt)
      .Bind(8, o.ref.id)
      .Bind(9, o.ref.lease_token)
      .Bind(11, avoid ? std::optional<int64_t>(now + d.delay.count() +
                                               kPreferAnotherNodeFor.count())
                      : std::nullopt);
  if (avoid) {
    upd.Bind(10, *avoid);
  } else {
    upd.BindNull(10);
  }
  WARDEN_ASSIGN_OR_RETURN(int changed, upd.Exec());
  if (changed != 1) return Internal("a failed job changed under the write lock");
  counts.Move(group, JobState::kRunning, d.next);
  WARDEN_RETURN_IF_ERROR(counts.Apply(*db_));

  // The attempt keeps what really happened; the job keeps the verdict
  // (e.g. this attempt `crash`, the job `crash_loop`). An attempt claimed
  // before schema 3 has its row already, written at its claim.
  WARDEN_ASSIGN_OR_RETURN(
      Stmt att,
      db_->Prepare("INSERT INTO attempts (job_id, attempt, worker_id, lease_token, claimed_at, "
                   "started_at, outcome, finished_at, error_message, exit_code, signal, "
                   "stderr_tail, stdout_tail, lost_by, runnable_at) VALUES (?1, ?2, ?3, ?4, ?5, "
                   "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
                   "ON CONFLICT (job_id, attempt) DO UPDATE SET outcome = ?7, finished_at = ?8, "
                   "error_message = ?9, exit_code = ?10, signal = ?11, stderr_tail = ?12, "
                   "stdout_tail = ?13, lost_by = ?14, runnable_at = ?15, "
                   "started_at = coalesce(attempts.started_at, ?6)"));
  att.Bind(1, o.ref.id)
      .Bind(2, attempt)
      .Bind(3, claimed_by)
      .Bind(4, o.ref.lease_token)
      .Bind(5, claimed_at)
      .Bind(6, attempt_started_at)
      .Bind(7, ErrorKindName(o.error.kind))
      .Bind(8, now)
      .Bind(9, o.error.message)
      .Bind(10, o.error.exit_code ? std::optional<int64_t>(*o.error.exit_code) : std::nullopt)
      .Bind(11, o.error.signal ? std::optional<int64_t>(*o.error.signal) : std::nullopt)
      .BindTextOrNull(12, o.error.stderr_tail)
      .BindTextOrNull(13, o.error.stdout_tail)
      .Bind(15, terminal ? std::nullopt : std::optional<int64_t>(now + d.delay.count()));
  if (const char* lost_by = LostByOf(o)) {
    att.Bind(14, lost_by);
  } else {
    att.BindNull(14);
  }
  WARDEN_RETURN_IF_ERROR(att.Exec().status());
  return true;
}

// One read, on a loss or a crash only: the workers that could claim the job
// on another node (as ClaimingWorkers sees them), each with the node that
// lost it and its own node's capacity and running jobs (ApplyNodeLocked's
// count).
Result<std::optional<std::string>> SqliteStore::NodeToAvoidLocked(WorkerId worker,
                                                                  const JobGroup& group) {
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q,
      db_->Prepare(std::string("SELECT ") + kWorkerColumns +
                   ", l.node, n.capacity, CASE WHEN n.capacity IS NULL THEN 0 ELSE (SELECT "
                   "count(*) FROM workers o JOIN jobs j ON j.worker_id = o.id AND j.state = "
                   "'running' WHERE o.node = w.node) END FROM workers l JOIN workers w ON "
                   "w.node <> l.node LEFT JOIN nodes n ON n.name = w.node WHERE l.id = ? AND "
                   "w.state = 'active' AND (n.name IS NULL OR (n.present AND n.enabled))"));
  q.Bind(1, worker);
  std::string node;
  std::vector<ClaimerElsewhere> elsewhere;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    node = q.Text(kClaimerLostNodeColumn);
    elsewhere.push_back(ClaimerElsewhereFromColumns(q));
  }
  q.Reset();
  if (!AnotherNodeCanTake(elsewhere, node, group.queue, group.task, group.command)) {
    return std::optional<std::string>();
  }
  return std::optional<std::string>(std::move(node));
}

// Successes without a result are the bulk of a busy worker's outcomes, and
// all write the same values: one statement writes them (see JobClaim).
// Each is fenced first, by a read under the same write lock. `plain`: their
// places in `outcomes`, which is where `accepted` is set.
Status SqliteStore::SucceedPlainLocked(std::span<const JobOutcome> outcomes,
                                       const PlainSuccesses& plain, TimeMs now,
                                       std::vector<bool>* accepted, CountChanges* counts) {
  if (plain.places.empty()) return Status::Ok();
  WARDEN_ASSIGN_OR_RETURN(Stmt fence, db_->Prepare(kFencePlainSql));
  fence.Bind(1, plain.ids);
  std::vector<JobId> live;
  live.reserve(plain.places.size());
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, fence.Step());
    if (!row) break;
    const JobId id = fence.Int(0);
    const std::optional<size_t> at = PlaceOf(plain.places, id);
    if (!at || outcomes[*at].ref.lease_token != fence.Int(1)) continue;
    (*accepted)[*at] = true;
    live.push_back(id);
    counts->Move(JobGroup{fence.Text(2), fence.Text(3), fence.Int(4) != 0}, JobState::kRunning,
                 JobState::kSucceeded);
  }
  fence.Reset();
  if (live.empty()) return Status::Ok();
  WARDEN_ASSIGN_OR_RETURN(Stmt upd, db_->Prepare(kSucceedPlainSql));
  const std::string some = live.size() < plain.places.size() ? JsonIdList(live) : "";
  upd.Bind(1, now).Bind(2, some.empty() ? plain.ids : some);
  WARDEN_ASSIGN_OR_RETURN(int changed, upd.Exec());
  if (changed != static_cast<int>(live.size())) {
    return Internal("completed jobs changed under the write lock");
  }
  return Status::Ok();
}

// Successes without a result, each job named once in the batch: a job named
// twice is written outcome by outcome, in order (the second is then
// fenced), like every outcome that is not a plain success. Found, and their
// parameters written, before the write lock is taken.
SqliteStore::PlainSuccesses SqliteStore::FindPlainSuccesses(
    std::span<const JobOutcome> outcomes) {
  IdPlaces all;
  all.reserve(outcomes.size());
  for (size_t i = 0; i < outcomes.size(); ++i) all.emplace_back(outcomes[i].ref.id, i);
  std::sort(all.begin(), all.end());
  PlainSuccesses plain;
  std::vector<JobId> ids;
  for (size_t k = 0; k < all.size(); ++k) {
    const auto [id, at] = all[k];
    const bool named_once = (k == 0 || all[k - 1].first != id) &&
                            (k + 1 == all.size() || all[k + 1].first != id);
    const JobOutcome& o = outcomes[at];
    if (!named_once || !o.success || !o.result.is_null() || !o.note.empty()) continue;
    plain.places.emplace_back(id, at);  // still sorted by id
    ids.push_back(id);
  }
  plain.ids = JsonIdList(ids);
  return plain;
}

Result<std::vector<bool>> SqliteStore::JobFinishMany(WorkerId worker,
                                                     std::span<const JobOutcome> outcomes) {
  const PlainSuccesses plain = FindPlainSuccesses(outcomes);
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  std::vector<bool> accepted(outcomes.size(), false);
  CountChanges counts;  // the successes' (a failure counts its own)
  WARDEN_RETURN_IF_ERROR(SucceedPlainLocked(outcomes, plain, now, &accepted, &counts));
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const JobOutcome& o = outcomes[i];
    if (PlaceOf(plain.places, o.ref.id) != i) {
      WARDEN_ASSIGN_OR_RETURN(accepted[i], o.success ? SucceedLocked(o, now, &counts)
                                                     : FailLocked(worker, o, now));
    }
    if (!accepted[i]) {
      WARDEN_RETURN_IF_ERROR(
          LogFenced(o.ref, worker, o.success ? "complete" : ErrorKindName(o.error.kind), now));
    }
  }
  WARDEN_RETURN_IF_ERROR(counts.Apply(*db_));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return accepted;
}

Result<bool> SqliteStore::JobCheckpoint(JobRef ref, const Json& checkpoint) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt upd, db_->Prepare("UPDATE jobs SET checkpoint = ? WHERE id = ? AND lease_token = ? "
                             "AND state = 'running'"));
  WARDEN_ASSIGN_OR_RETURN(
      int n, upd.Bind(1, JsonText(checkpoint)).Bind(2, ref.id).Bind(3, ref.lease_token).Exec());
  return n == 1;
}

}  // namespace warden::sqlite
