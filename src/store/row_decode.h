// One decoder for the job and worker rows every backend reads: the jobs
// table's columns in kJobColumns' order (each backend spells that list in
// its own SQL: store/sqlite/rows.cc, store/postgres/pg_rows.cc) into a
// JobInfo, and the workers list's into a WorkerInfo.
//
// A backend hands its result row in through a ColumnReader: SQLite's Stmt
// is one; PostgreSQL's Rows is one once a row index is bound (pg_rows.cc).
// The decoders are templates over that reader, not virtual calls: the
// claim decodes every row it claims, and each backend's instantiation
// compiles to the direct column reads its own hand-written copy made (the
// PostgreSQL decoders' machine code came out byte for byte the same).
//
// Thread safety: stateless functions.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>

#include "core/node_preference.h"
#include "warden/text.h"
#include "warden/lists.h"
#include "warden/job.h"

namespace warden {

// Reads column `col` (0-based) of one result row. Int is 0 and Text is ""
// for NULL; Bool is false for NULL.
template <typename R>
concept ColumnReader = requires(const R& r, int col) {
  { r.Int(col) } -> std::convertible_to<int64_t>;
  { r.OptInt(col) } -> std::convertible_to<std::optional<int64_t>>;
  { r.Text(col) } -> std::convertible_to<std::string>;
  { r.IsNull(col) } -> std::convertible_to<bool>;
  { r.Bool(col) } -> std::convertible_to<bool>;
};

// How many columns kJobColumns has: a query's further columns start here.
inline constexpr int kJobColumnCount = 32;
// The worker's name and the last error's message (JobExtraColumns).
inline constexpr int kJobExtraColumnCount = 2;

template <ColumnReader R>
JobInfo JobFromColumns(const R& r) {
  JobInfo j;
  j.id = r.Int(0);
  j.queue = r.Text(1);
  j.task = r.Text(2);
  j.command = r.Text(3);
  j.payload = ParseStoredJson(r.Text(4));
  j.priority = static_cast<int>(r.Int(5));
  j.state = ParseJobState(r.Text(6)).value_or(JobState::kDead);
  j.attempt = static_cast<int>(r.Int(7));
  j.charged = static_cast<int>(r.Int(8));
  j.crashes = static_cast<int>(r.Int(9));
  j.max_attempts = static_cast<int>(r.Int(10));
  j.max_crashes = static_cast<int>(r.Int(11));
  j.retry = ParseRetryPolicy(r.Text(12)).value_or(RetryPolicy::kDefault);
  j.delivery = ParseDelivery(r.Text(13)).value_or(Delivery::kAtLeastOnce);
  j.timeout = Millis(r.Int(14));
  if (auto l = r.OptInt(15)) j.lease = Millis(*l);
  j.unique_key = r.Text(16);
  j.concurrency_key = r.Text(17);
  j.worker = r.OptInt(18);
  j.lease_token = r.Int(19);
  j.lease_expires_at = r.OptInt(20);
  j.run_at = r.Int(21);
  j.start_deadline_at = r.OptInt(22);
  j.created_at = r.Int(23);
  j.started_at = r.OptInt(24);
  j.finished_at = r.OptInt(25);
  j.checkpoint = ParseStoredJson(r.Text(26));
  j.result = ParseStoredJson(r.Text(27));
  if (!r.IsNull(28)) j.last_error = ParseErrorKind(r.Text(28));
  // A running job's effective lease (per-job or the claiming worker's).
  if (auto l = r.OptInt(29)) j.lease = Millis(*l);
  if (auto until = r.OptInt(31)) {
    j.avoid_node = r.Text(30);
    j.avoid_node_until = until;
  }
  return j;
}

// The JobExtraColumns, starting at column `first`.
template <ColumnReader R>
void JobExtrasFromColumns(const R& r, int first, JobInfo* j) {
  j->worker_name = r.Text(first);
  if (j->last_error) j->last_error_message = r.Text(first + 1);
}

// An `attempts` row as both stores select it: attempt, worker_id,
// lease_token, claimed_at, started_at, finished_at, outcome, error_message,
// exit_code, signal, stderr_tail, the worker's name, stdout_tail, lost_by,
// runnable_at. A succeeded attempt's stderr_tail holds its note (fd-3
// lines it ignored).
template <ColumnReader R>
AttemptInfo AttemptFromColumns(const R& r) {
  AttemptInfo a;
  a.attempt = static_cast<int>(r.Int(0));
  a.worker = r.Int(1);
  a.lease_token = r.Int(2);
  a.claimed_at = r.Int(3);
  a.started_at = r.OptInt(4);
  a.finished_at = r.OptInt(5);
  a.outcome = r.Text(6);
  if (auto kind = ParseErrorKind(a.outcome)) {
    AttemptError e;
    e.kind = *kind;
    e.message = r.Text(7);
    if (auto c = r.OptInt(8)) e.exit_code = static_cast<int>(*c);
    if (auto s = r.OptInt(9)) e.signal = static_cast<int>(*s);
    e.stderr_tail = r.Text(10);
    e.stdout_tail = r.Text(12);
    a.error = e;
  } else {
    a.note = r.Text(10);
  }
  a.worker_name = r.Text(11);
  a.lost_by = r.Text(13);
  a.runnable_at = r.OptInt(14);
  return a;
}

// The columns of kWorkerColumns, in its order.
template <ColumnReader R>
WorkerInfo WorkerFromColumns(const R& r) {
  WorkerInfo w;
  w.id = r.Int(0);
  w.name = r.Text(1);
  w.node = r.Text(2);
  w.pid = static_cast<int>(r.Int(3));
  w.version = r.Text(4);
  w.queues = SplitList(r.Text(5));
  w.concurrency = static_cast<int>(r.Int(6));
  w.state = ParseWorkerState(r.Text(7)).value_or(WorkerState::kDead);
  w.started_at = r.Int(8);
  w.last_heartbeat = r.Int(9);
  w.stopped_at = r.OptInt(10);
  w.death_reason = r.Text(11);
  w.running = static_cast<int>(r.Int(12));
  w.tasks = SplitList(r.Text(13));
  w.allow_commands = r.Bool(14);
  w.keepalive = Millis(r.Int(15));
  return w;
}

// NodeToAvoidLocked's rows: kWorkerColumns, then the node that lost the
// job, then the worker's node's capacity (NULL: none) and running jobs.
inline constexpr int kClaimerLostNodeColumn = 16;
template <ColumnReader R>
ClaimerElsewhere ClaimerElsewhereFromColumns(const R& r) {
  ClaimerElsewhere c;
  c.worker = WorkerFromColumns(r);
  c.node_capacity = r.OptInt(17);
  c.node_running = r.Int(18);
  return c;
}

}  // namespace warden
