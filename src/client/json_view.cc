#include "warden/json_view.h"

#include "warden/duration.h"
#include "warden/flow.h"

namespace warden {
namespace {

Json OptTime(const std::optional<TimeMs>& t) { return t ? Json(FormatTime(*t)) : Json(); }
Json OptText(const std::string& text) { return text.empty() ? Json() : Json(text); }

constexpr JobState kAllJobStates[] = {
    JobState::kScheduled, JobState::kAvailable, JobState::kRunning,   JobState::kSucceeded,
    JobState::kRetryable, JobState::kDead,      JobState::kCancelled, JobState::kExpired};
constexpr WorkerState kAllWorkerStates[] = {WorkerState::kActive, WorkerState::kDraining,
                                            WorkerState::kStopped, WorkerState::kDead};

Json AttemptToJson(const AttemptInfo& a) {
  Json j = {{"attempt", a.attempt},
            {"worker", a.worker},
            {"worker_name", OptText(a.worker_name)},
            {"lease_token", a.lease_token},
            {"claimed_at", FormatTime(a.claimed_at)},
            // Only at-most-once attempts record when they started (the
            // durable mark written before the job's code runs); an
            // at-least-once start is not written to the store (it would cost
            // a durable write per job on the way to its start, see claiming
            // ahead in docs/cli.md, "Worker configuration"). The key says
            // what it holds: it was `started_at`, null for every
            // at-least-once attempt.
            {"start_marked_at", OptTime(a.started_at)},
            {"finished_at", OptTime(a.finished_at)},
            {"outcome", a.outcome},
            {"note", a.note.empty() ? Json() : Json(a.note)},
            {"lost_by", OptText(a.lost_by)},
            {"runnable_at", OptTime(a.runnable_at)},
            {"error", nullptr}};
  if (a.error) {
    j["error"] = {{"kind", ErrorKindName(a.error->kind)},
                  {"message", a.error->message},
                  {"exit_code", a.error->exit_code ? Json(*a.error->exit_code) : Json()},
                  {"signal", a.error->signal ? Json(*a.error->signal) : Json()},
                  {"stderr_tail", a.error->stderr_tail},
                  {"stdout_tail", a.error->stdout_tail}};
  }
  return j;
}

}  // namespace

Json JobToJson(const JobInfo& j, bool with_attempts) {
  Json out = {{"id", j.id},
              {"queue", j.queue},
              {"task", j.task},
              {"command", j.command.empty() ? Json() : Json(j.command)},
              {"payload", j.payload},
              {"priority", j.priority},
              {"state", JobStateName(j.state)},
              {"attempt", j.attempt},
              {"charged_attempts", j.charged},
              {"max_attempts", j.max_attempts},
              {"crashes", j.crashes},
              {"max_crashes", j.max_crashes},
              {"retry", RetryPolicyName(j.retry)},
              {"delivery", DeliveryName(j.delivery)},
              {"timeout_ms", j.timeout.count()},
              // The lease its latest attempt ran under; before a first claim, its
              // own (null: its worker's --lease will apply).
              {"lease_ms", j.lease ? Json(j.lease->count()) : Json()},
              {"unique_key", j.unique_key.empty() ? Json() : Json(j.unique_key)},
              {"concurrency_key", j.concurrency_key.empty() ? Json() : Json(j.concurrency_key)},
              {"worker", j.worker ? Json(*j.worker) : Json()},
              {"worker_name", OptText(j.worker_name)},
              {"lease_token", j.lease_token},
              {"lease_expires_at", j.state == JobState::kRunning ? OptTime(j.lease_expires_at)
                                                                 : Json()},
              {"run_at", FormatTime(j.run_at)},
              {"start_deadline_at", OptTime(j.start_deadline_at)},
              {"created_at", FormatTime(j.created_at)},
              {"started_at", OptTime(j.started_at)},
              {"finished_at", OptTime(j.finished_at)},
              {"last_error", j.last_error ? Json(ErrorKindName(*j.last_error)) : Json()},
              {"last_error_message", OptText(j.last_error_message)},
              // Kept from the node that lost it, until then (null: none).
              {"avoid_node", j.avoid_node_until
                                 ? Json{{"node", j.avoid_node},
                                        {"until", FormatTime(*j.avoid_node_until)}}
                                 : Json()},
              {"checkpoint", j.checkpoint},
              {"result", j.result}};
  if (with_attempts) {
    out["attempts"] = Json::array();
    for (const auto& a : j.attempts) out["attempts"].push_back(AttemptToJson(a));
  }
  return out;
}

Json WorkerToJson(const WorkerInfo& w) {
  return {{"id", w.id},
          {"name", w.name},
          {"node", w.node},
          {"pid", w.pid},
          {"state", WorkerStateName(w.state)},
          {"version", w.version},
          {"queues", w.queues},
          {"concurrency", w.concurrency},
          {"started_at", FormatTime(w.started_at)},
          {"last_heartbeat", FormatTime(w.last_heartbeat)},
          {"stopped_at", OptTime(w.stopped_at)},
          {"death_reason", w.death_reason.empty() ? Json() : Json(w.death_reason)},
          {"running", w.running},
          {"keepalive_ms", w.keepalive.count()},
          {"silent", w.silent_for.has_value()},
          {"silent_for_ms", w.silent_for ? Json(w.silent_for->count()) : Json()},
          {"node_disabled", w.node_disabled},
          {"maintenance_only", w.MaintenanceOnly()}};
}

Json StatsToJson(const Stats& s) {
  // Every state, zero included, so that the keys never change.
  Json jobs = Json::object();
  for (JobState st : kAllJobStates) jobs[JobStateName(st)] = 0;
  for (const auto& [state, n] : s.jobs) jobs[state] = n;
  Json workers = Json::object();
  for (WorkerState st : kAllWorkerStates) workers[WorkerStateName(st)] = 0;
  for (const auto& [state, n] : s.workers) workers[state] = n;
  return {{"jobs", jobs},
          {"workers", workers},
          {"recovery",
           {{"rescued_attempts", s.rescued},
            {"rescued_jobs", s.rescued_jobs},
            {"fenced_writes", s.fenced_writes},
            {"crash_loops", s.crash_loops}}}};
}


Json UnservedToJson(const std::vector<BacklogGroup>& unserved) {
  Json out = Json::array();
  for (const BacklogGroup& g : unserved) {
    out.push_back({{"queue", g.queue},
                   {"task", g.task},
                   {"command", g.command},
                   {"state", JobStateName(g.state)},
                   {"jobs", g.count}});
  }
  return out;
}


Json QueueToJson(const QueueInfo& q, TimeMs now) {
  Json jobs = Json::object();
  for (JobState st : kAllJobStates) jobs[JobStateName(st)] = 0;
  for (const auto& [state, n] : q.jobs) jobs[state] = n;
  const Json oldest_age =
      q.oldest_available_at ? Json(std::max<int64_t>(0, now - *q.oldest_available_at) / 1000.0)
                            : Json();
  return {{"name", q.name},
          {"paused", q.paused},
          {"paused_at", OptTime(q.paused_at)},
          {"jobs", jobs},
          {"oldest_available_at", OptTime(q.oldest_available_at)},
          {"oldest_available_age_s", oldest_age},
          {"live_workers", q.live_workers},
          {"limits", LimitsToJson(q.limits)}};
}

Json LimitsToJson(const QueueLimits& l) {
  return {{"concurrency", l.concurrency ? Json(*l.concurrency) : Json()},
          {"rate", l.rate ? Json(FormatRate(*l.rate)) : Json()}};
}

Json TokenToJson(const TokenInfo& t) {
  return {{"id", t.id},
          {"name", t.name},
          {"scope", ScopeName(t.scope)},
          {"created_at", FormatTime(t.created_at)},
          {"revoked_at", OptTime(t.revoked_at)},
          {"last_used_at", OptTime(t.last_used_at)},
          {"expires_at", OptTime(t.expires_at)}};
}

Json NodeToJson(const NodeInfo& n) {
  return {{"name", n.name},
          {"registered", n.registered},
          {"present", n.present},
          {"enabled", n.enabled},
          {"takes_work", n.TakesWork()},
          {"capacity", n.capacity ? Json(*n.capacity) : Json()},
          {"running", n.running},
          {"live_workers", n.live_workers},
          {"updated_at", n.registered ? Json(FormatTime(n.updated_at)) : Json()},
          {"removed_at", OptTime(n.removed_at)}};
}

Json NodeSyncToJson(const NodeSyncReport& r) {
  return {{"added", r.added},     {"revived", r.revived},   {"removed", r.removed},
          {"resized", r.resized}, {"disabled", r.disabled}, {"unchanged", r.unchanged}};
}

Json NodeSyncResultToJson(const NodeSyncReport& r, bool dry_run, int workers_released,
                          int64_t jobs_recovered) {
  Json out = NodeSyncToJson(r);
  out["dry_run"] = dry_run;
  out["workers_released"] = workers_released;
  out["jobs_recovered"] = jobs_recovered;
  return out;
}

Json AuditToJson(const AuditEntry& e) {
  return {{"id", e.id},
          {"at", FormatTime(e.at)},
          {"actor", e.actor},
          {"action", e.action},
          {"target", e.target},
          {"count", e.count}};
}

Json WhyToJson(const JobInfo& job, const std::vector<WhyReason>& reasons) {
  Json out = Json::array();
  for (const WhyReason& r : reasons) {
    out.push_back({{"code", r.code}, {"message", r.message}, {"evidence", r.evidence}});
  }
  return {{"id", job.id}, {"state", JobStateName(job.state)}, {"reasons", out}};
}

Json TimelineToJson(const JobTimeline& t) {
  Json attempts = Json::array();
  for (const AttemptInfo& a : t.job.attempts) attempts.push_back(AttemptToJson(a));
  Json fenced = Json::array();
  for (const FencedWriteInfo& f : t.fenced) {
    fenced.push_back({{"at", FormatTime(f.at)},
                      {"worker", f.worker},
                      {"worker_name", OptText(f.worker_name)},
                      {"lease_token", f.lease_token},
                      {"what", f.what}});
  }
  Json events = Json::array();
  for (const TimelineEvent& e : t.events) {
    events.push_back({{"at", FormatTime(e.at)},
                      {"kind", e.kind},
                      {"attempt", e.attempt == 0 ? Json() : Json(e.attempt)},
                      {"text", e.text},
                      {"evidence", e.evidence}});
  }
  return {{"id", t.job.id},
          {"state", JobStateName(t.job.state)},
          {"attempts", attempts},
          {"fenced_writes", fenced},
          {"events", events}};
}

}  // namespace warden
