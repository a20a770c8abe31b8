// PgStore: the finish path: fenced writes, successes, failures, batches, checkpoints.
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/node_preference.h"
#include "core/retry.h"
#include "store/postgres/pg_rows.h"
#include "store/postgres/pg_store.h"
#include "warden/text.h"

namespace warden::pg {

Status PgStore::LogFenced(const JobRef& ref, WorkerId worker, const std::string& what,
                          TimeMs now) {
  return conn_
      ->Exec("INSERT INTO warden.fenced_writes (job_id, lease_token, worker_id, at, what) "
             "VALUES ($1::bigint, $2::bigint, $3::bigint, $4::bigint, $5)",
             Params().Add(ref.id).Add(ref.lease_token).Add(worker).Add(now).Add(what))
      .status();
}

Result<bool> PgStore::FailLocked(const JobOutcome& o, TimeMs now, RescuedJob* rescued) {
  WARDEN_ASSIGN_OR_RETURN(
      Rows q, conn_->Exec("SELECT delivery, started_mark, retry, charged, max_attempts, "
                          "crashes, max_crashes, attempt, cancel_requested, queue, task, "
                          "command <> '', worker_id FROM warden.jobs WHERE id = $1::bigint AND "
                          "lease_token = $2::bigint AND state = 'running' FOR UPDATE",
                          Params().Add(o.ref.id).Add(o.ref.lease_token)));
  if (q.empty()) return false;
  FailureInput in;
  in.kind = o.error.kind;
  in.delivery = ParseDelivery(q.Text(0, 0)).value_or(Delivery::kAtLeastOnce);
  in.started_mark = q.Bool(0, 1);
  in.retry = ParseRetryPolicy(q.Text(0, 2)).value_or(RetryPolicy::kDefault);
  in.charged = static_cast<int>(q.Int(0, 3));
  in.max_attempts = static_cast<int>(q.Int(0, 4));
  in.crashes = static_cast<int>(q.Int(0, 5));
  in.max_crashes = static_cast<int>(q.Int(0, 6));
  in.lost_by = o.lost_by;
  const int64_t attempt = q.Int(0, 7);
  // An operator's cancel wins over however the attempt ended.
  if (q.Bool(0, 8)) in.kind = ErrorKind::kCancelled;

  const FailureDecision d = DecideFailure(in, Jitter());
  if (rescued) *rescued = RescuedJob{o.ref.id, q.Text(0, 9), d.next, d.kind};
  const bool terminal = IsTerminal(d.next);
  std::optional<std::string> avoid;
  if (LossPrefersAnotherNode(o.error.kind, o.lost_by, d.next) && !q.IsNull(0, 12)) {
    WARDEN_ASSIGN_OR_RETURN(
        avoid, NodeToAvoidLocked(q.Int(0, 12), q.Text(0, 9), q.Text(0, 10), q.Bool(0, 11)));
  }
  Params p;
  p.Add(JobStateName(d.next)).Add(static_cast<int64_t>(d.delay.count())).Add(now);
  p.Add(d.charge ? 1 : 0).Add(d.count_crash ? 1 : 0).Add(ErrorKindName(d.kind));
  p.Add(terminal ? std::optional<int64_t>(now) : std::nullopt).Add(o.ref.id);
  p.Add(ErrorKindName(o.error.kind)).Add(o.error.message);
  p.Add(o.error.exit_code ? std::optional<int64_t>(*o.error.exit_code) : std::nullopt);
  p.Add(o.error.signal ? std::optional<int64_t>(*o.error.signal) : std::nullopt);
  p.AddTextOrNull(o.error.stderr_tail).Add(attempt).AddTextOrNull(o.error.stdout_tail);
  const char* lost_by = LostByOf(o);
  p.AddTextOrNull(lost_by ? lost_by : "");
  p.Add(terminal ? std::nullopt : std::optional<int64_t>(now + d.delay.count()));
  p.AddTextOrNull(avoid.value_or(""));
  p.Add(avoid ? std::optional<int64_t>(now + d.delay.count() + kPreferAnotherNodeFor.count())
              : std::nullopt);
  // A retry without backoff keeps its place in line (its old run_at), so a
  // rescued job runs next instead of behind the whole backlog. The attempt
  // keeps what really happened; the job keeps the verdict.
  WARDEN_RETURN_IF_ERROR(
      conn_
          ->Exec("WITH j AS (UPDATE warden.jobs SET state = $1, run_at = CASE WHEN "
                 "$2::bigint > 0 THEN $3::bigint + $2::bigint ELSE run_at END, charged = "
                 "charged + $4::int, crashes = crashes + $5::int, last_error = $6, finished_at "
                 "= $7::bigint, lease_expires_at = NULL, cancel_requested = false, avoid_node = "
                 "$18, avoid_until = $19::bigint WHERE id = $8::bigint) UPDATE warden.attempts "
                 "SET outcome = $9, finished_at = $3::bigint, error_message = $10, exit_code = "
                 "$11::int, signal = $12::int, stderr_tail = $13, stdout_tail = $15, lost_by = "
                 "$16, runnable_at = $17::bigint WHERE job_id = $8::bigint AND attempt = "
                 "$14::int",
                 p)
          .status());
  return true;
}

// One read, on a loss or a crash only (SqliteStore::NodeToAvoidLocked).
Result<std::optional<std::string>> PgStore::NodeToAvoidLocked(WorkerId worker,
                                                              const std::string& queue,
                                                              const std::string& task,
                                                              bool command) {
  WARDEN_ASSIGN_OR_RETURN(
      Rows r,
      conn_->Exec(std::string("SELECT ") + kWorkerColumns +
                      ", l.node, n.capacity, CASE WHEN n.capacity IS NULL THEN 0 ELSE (SELECT "
                      "count(*) FROM warden.workers o JOIN warden.jobs j ON j.worker_id = o.id "
                      "AND j.state = 'running' WHERE o.node = w.node) END FROM warden.workers l "
                      "JOIN warden.workers w ON w.node <> l.node LEFT JOIN warden.nodes n ON "
                      "n.name = w.node WHERE l.id = $1::bigint AND w.state = 'active' AND "
                      "(n.name IS NULL OR (n.present AND n.enabled))",
                  Params().Add(worker)));
  if (r.empty()) return std::optional<std::string>();
  std::string node = r.Text(0, kClaimerLostNodeColumn);
  std::vector<ClaimerElsewhere> elsewhere;
  for (int i = 0; i < r.size(); ++i) elsewhere.push_back(ClaimerElsewhereFromRow(r, i));
  if (!AnotherNodeCanTake(elsewhere, node, queue, task, command)) {
    return std::optional<std::string>();
  }
  return std::optional<std::string>(std::move(node));
}

// `note`: what the worker noticed about a successful attempt (NULL for
// almost all), kept in its stderr_tail as a failure's is. The note rides
// out of `done` in its RETURNING: `v` is read once, so PostgreSQL inlines
// it. Read a second time (joined to `done` for the note), it was
// materialized and joined without an index, row by row: a batch of 500
// completions took 43 ms instead of 8 (4x fewer jobs/s at 512 slots,
// bench/ab_throughput.sh; issue 36).
// Every job named is running under the token named: JobFinishMany checked
// that on the rows it holds locked, so the statement says neither `state =
// 'running'` nor relies on the planner for it. With the state in the WHERE,
// statistics taken while no job ran (a backlog enqueued, then analyzed:
// autovacuum does it) put the running jobs at one row, and the planner
// compared each running job with every id of the batch (a nested loop over
// `v`): 512 x 512 comparisons, 50 ms a batch instead of 1 (issue 36).
// `j.id = ANY($1)` keeps the ids' lookup on jobs_pkey, custom or generic.
const char* const kSucceedManySql =
    "WITH v AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $5::text[]) AS "
    "v(id, token, result, note)), done AS (UPDATE warden.jobs j SET state = 'succeeded', "
    "result = v.result::json, finished_at = $4::bigint, lease_expires_at = NULL FROM v WHERE "
    "j.id = v.id AND j.id = ANY($1::bigint[]) AND j.lease_token = v.token RETURNING j.id, "
    "j.lease_token, j.attempt, v.note), att AS (UPDATE warden.attempts a SET outcome = "
    "'succeeded', finished_at = $4::bigint, stderr_tail = done.note FROM done WHERE a.job_id = "
    "done.id AND a.attempt = done.attempt) SELECT id, lease_token FROM done";

Result<std::vector<bool>> PgStore::JobFinishMany(WorkerId worker,
                                                 std::span<const JobOutcome> outcomes) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  // Lock the rows in id order first: a heartbeat or a rescue locking the
  // same worker's jobs does so in the same order, so none can deadlock. The
  // same round trip reads the time, and which jobs are running under which
  // token: held locked, they stay so until the commit.
  std::vector<int64_t> all;
  for (const JobOutcome& o : outcomes) all.push_back(o.ref.id);
  WARDEN_ASSIGN_OR_RETURN(
      Rows locked,
      conn_->Exec("WITH l AS MATERIALIZED (SELECT id, lease_token, state FROM warden.jobs "
                  "WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE) SELECT "
                  "coalesce($2::bigint, warden.now_ms()), l.id, l.lease_token FROM (SELECT 1) "
                  "one LEFT JOIN l ON l.state = 'running'",
                  Params().AddArray(all).Add(FakeNow())));
  const TimeMs now = locked.Int(0, 0);
  std::set<std::pair<JobId, int64_t>> running;
  for (int i = 0; i < locked.size(); ++i) {
    if (!locked.IsNull(i, 1)) running.emplace(locked.Int(i, 1), locked.Int(i, 2));
  }

  std::vector<bool> accepted(outcomes.size(), false);
  std::vector<int64_t> ids, tokens;
  std::vector<std::optional<std::string>> results, notes;
  for (const JobOutcome& o : outcomes) {
    if (!o.success || !running.count({o.ref.id, o.ref.lease_token})) continue;
    ids.push_back(o.ref.id);
    tokens.push_back(o.ref.lease_token);
    results.push_back(o.result.is_null() ? std::nullopt
                                         : std::optional<std::string>(JsonText(o.result)));
    notes.push_back(o.note.empty() ? std::nullopt : std::optional<std::string>(o.note));
  }
  std::set<std::pair<JobId, int64_t>> done;
  if (!ids.empty()) {
    WARDEN_ASSIGN_OR_RETURN(
        Rows r, conn_->Exec(kSucceedManySql,
                            Params()
                                                .AddArray(ids)
                                                .AddArray(tokens)
                                                .AddArray(results)
                                                .Add(now)
                                                .AddArray(notes)));
    for (int i = 0; i < r.size(); ++i) done.emplace(r.Int(i, 0), r.Int(i, 1));
  }
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const JobOutcome& o = outcomes[i];
    if (o.success) {
      accepted[i] = done.count({o.ref.id, o.ref.lease_token}) > 0;
      if (!accepted[i]) {
        // A retry of a batch whose COMMIT reply was lost finds its own
        // completion already there: that is not a fenced write.
        WARDEN_ASSIGN_OR_RETURN(
            Rows s, conn_->Exec("SELECT 1 FROM warden.jobs WHERE id = $1::bigint AND "
                                "lease_token = $2::bigint AND state = 'succeeded'",
                                Params().Add(o.ref.id).Add(o.ref.lease_token)));
        accepted[i] = !s.empty();
        if (accepted[i]) continue;
      }
    } else {
      WARDEN_ASSIGN_OR_RETURN(accepted[i], FailLocked(o, now));
    }
    if (!accepted[i]) {
      WARDEN_RETURN_IF_ERROR(
          LogFenced(o.ref, worker, o.success ? "complete" : ErrorKindName(o.error.kind), now));
    }
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return accepted;
}

Result<bool> PgStore::JobCheckpoint(JobRef ref, const Json& checkpoint) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("UPDATE warden.jobs SET checkpoint = $1::json WHERE id = $2::bigint "
                          "AND lease_token = $3::bigint AND state = 'running'",
                          Params().Add(JsonText(checkpoint)).Add(ref.id).Add(ref.lease_token)));
  return r.affected() == 1;
}

}  // namespace warden::pg
