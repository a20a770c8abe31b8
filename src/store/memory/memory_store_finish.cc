// MemoryStore: the finish path: fenced writes, successes, failures, batches, checkpoints.
#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/node_preference.h"
#include "core/retry.h"
#include "store/memory/memory_store.h"
#include "warden/text.h"

namespace warden::memory {
namespace {

// The job's `attempts` row for `attempt`, made if there is none (SQLite's
// INSERT ... ON CONFLICT (job_id, attempt)); `made` says which.
AttemptRow& UpsertAttempt(JobRow& job, int attempt, bool* made) {
  auto it = std::lower_bound(job.attempts.begin(), job.attempts.end(), attempt,
                             [](const AttemptRow& a, int n) { return a.attempt < n; });
  *made = it == job.attempts.end() || it->attempt != attempt;
  if (*made) {
    it = job.attempts.insert(it, AttemptRow{});
    it->attempt = attempt;
  }
  return *it;
}

}  // namespace

bool MemoryStore::SucceedLocked(const JobOutcome& o, TimeMs now) {
  JobRow* job = FindRunningLocked(o.ref);
  if (!job) return false;
  SetJobState(db_->t, *job, JobState::kSucceeded);
  job->result = o.result.is_null() ? "" : JsonText(o.result);
  job->finished_at = now;
  job->lease_expires_at.reset();
  // The job row keeps the succeeded attempt; one with a note is the one
  // success that gets an `attempts` row, the note in its stderr_tail.
  if (o.note.empty()) return true;
  bool made = false;
  AttemptRow& a = UpsertAttempt(*job, job->attempt, &made);
  if (made) {
    a.worker_id = job->worker_id.value_or(0);
    a.lease_token = job->lease_token;
    a.claimed_at = job->started_at.value_or(now);
    a.started_at = job->attempt_started_at;
  }
  a.outcome = "succeeded";
  a.finished_at = now;
  a.stderr_tail = o.note;
  return true;
}

bool MemoryStore::FailLocked(const JobOutcome& o, TimeMs now, RescuedJob* rescued) {
  JobRow* job = FindRunningLocked(o.ref);
  if (!job) return false;
  FailureInput in;
  in.kind = o.error.kind;
  in.delivery = job->delivery;
  in.started_mark = job->started_mark;
  in.retry = job->retry;
  in.charged = job->charged;
  in.max_attempts = job->max_attempts;
  in.crashes = job->crashes;
  in.max_crashes = job->max_crashes;
  in.lost_by = o.lost_by;
  // An operator's cancel wins over however the attempt ended (a job whose
  // worker died before it could stop it must not be retried).
  if (job->cancel_requested) in.kind = ErrorKind::kCancelled;

  const FailureDecision d = DecideFailure(in, Jitter());
  if (rescued) *rescued = RescuedJob{job->id, job->queue, d.next, d.kind};
  // A retry without backoff keeps its place in line (its old run_at), so a
  // rescued job runs next instead of behind the whole backlog.
  if (d.delay.count() > 0) SetJobRunAt(db_->t, *job, now + d.delay.count());
  SetJobState(db_->t, *job, d.next);
  job->charged += d.charge ? 1 : 0;
  job->crashes += d.count_crash ? 1 : 0;
  job->last_error = d.kind;
  job->finished_at = IsTerminal(d.next) ? std::optional<TimeMs>(now) : std::nullopt;
  job->lease_expires_at.reset();
  job->cancel_requested = false;
  job->avoid_node.clear();
  job->avoid_until.reset();
  if (LossPrefersAnotherNode(o.error.kind, o.lost_by, d.next)) {
    if (auto node = NodeToAvoidLocked(*job)) {
      job->avoid_node = *node;
      job->avoid_until = now + d.delay.count() + kPreferAnotherNodeFor.count();
    }
  }

  // The attempt keeps what really happened; the job keeps the verdict
  // (e.g. this attempt `crash`, the job `crash_loop`).
  bool made = false;
  AttemptRow& a = UpsertAttempt(*job, job->attempt, &made);
  if (made) {
    a.worker_id = job->worker_id.value_or(0);
    a.lease_token = o.ref.lease_token;
    a.claimed_at = job->started_at.value_or(now);
  }
  if (!a.started_at) a.started_at = job->attempt_started_at;
  a.outcome = ErrorKindName(o.error.kind);
  a.finished_at = now;
  a.error_message = o.error.message;
  a.exit_code = o.error.exit_code;
  a.signal = o.error.signal;
  a.stderr_tail = o.error.stderr_tail;
  a.stdout_tail = o.error.stdout_tail;
  const char* lost_by = LostByOf(o);
  a.lost_by = lost_by ? lost_by : "";
  if (!IsTerminal(d.next)) a.runnable_at = now + d.delay.count();
  return true;
}

// SqliteStore::NodeToAvoidLocked.
std::optional<std::string> MemoryStore::NodeToAvoidLocked(const JobRow& job) {
  if (!job.worker_id) return std::nullopt;
  auto lost_on = db_->t.workers.find(*job.worker_id);
  if (lost_on == db_->t.workers.end()) return std::nullopt;
  const std::string& node = lost_on->second.node;
  std::map<WorkerId, int> running;
  for (const auto& [id, j] : db_->t.jobs) {
    if (j.state == JobState::kRunning && j.worker_id) ++running[*j.worker_id];
  }
  std::map<std::string, int64_t> node_running;
  for (const auto& [id, n] : running) {
    auto w = db_->t.workers.find(id);
    if (w != db_->t.workers.end()) node_running[w->second.node] += n;
  }
  std::vector<ClaimerElsewhere> elsewhere;
  for (const auto& [id, w] : db_->t.workers) {
    if (w.state != WorkerState::kActive || w.node == node) continue;
    auto n = db_->t.nodes.find(w.node);
    if (n != db_->t.nodes.end() && !n->second.TakesWork()) continue;
    auto r = running.find(id);
    ClaimerElsewhere c;
    c.worker = ToWorkerInfo(w, r == running.end() ? 0 : r->second);
    if (n != db_->t.nodes.end() && n->second.capacity) {
      c.node_capacity = n->second.capacity;
      c.node_running = node_running[w.node];
    }
    elsewhere.push_back(std::move(c));
  }
  if (!AnotherNodeCanTake(elsewhere, node, job.queue, job.task, !job.command.empty())) {
    return std::nullopt;
  }
  return node;
}

// SQLite writes a batch's plain successes (no result, no note) with one
// statement before the others; each job of those is named once in the
// batch, so writing every outcome in order, as here, ends alike.
Result<std::vector<bool>> MemoryStore::JobFinishMany(WorkerId worker,
                                                     std::span<const JobOutcome> outcomes) {
  MutexLock lock(db_->mu);
  const TimeMs now = clock_->NowMs();
  std::vector<bool> accepted(outcomes.size(), false);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const JobOutcome& o = outcomes[i];
    accepted[i] = o.success ? SucceedLocked(o, now) : FailLocked(o, now);
    if (!accepted[i]) {
      db_->t.fenced_writes.push_back(FencedWrite{
          o.ref.id, o.ref.lease_token, worker, now,
          o.success ? "complete" : ErrorKindName(o.error.kind)});
    }
  }
  return accepted;
}

Result<bool> MemoryStore::JobCheckpoint(JobRef ref, const Json& checkpoint) {
  MutexLock lock(db_->mu);
  JobRow* job = FindRunningLocked(ref);
  if (!job) return false;
  job->checkpoint = JsonText(checkpoint);
  return true;
}

}  // namespace warden::memory
