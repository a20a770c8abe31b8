#include "warden/timeline.h"

#include <algorithm>
#include <map>
#include <utility>

#include "warden/duration.h"

namespace warden {
namespace {

// "w1 (worker 5, pid 123 on host-a)", or "worker 5" once its row is pruned.
std::string WorkerText(WorkerId id, const std::string& name, const WorkerInfo* w) {
  const std::string numbered = "worker " + std::to_string(id);
  if (!w) return name.empty() ? numbered : name + " (" + numbered + ")";
  return w->name + " (" + numbered + ", pid " + std::to_string(w->pid) + " on " + w->node + ")";
}

Json WorkerEvidence(WorkerId id, const std::string& name, const WorkerInfo* w) {
  Json j = {{"worker", id}, {"worker_name", name.empty() ? Json() : Json(name)}};
  if (w) {
    j["worker_name"] = w->name;
    j["node"] = w->node;
    j["pid"] = w->pid;
    j["worker_started_at"] = FormatTime(w->started_at);
  }
  return j;
}

const char* LossText(const std::string& lost_by) {
  if (lost_by == "proven_death") return "its worker was proven dead";
  if (lost_by == "lease_expiry") return "its lease ran out unrenewed";
  if (lost_by == "operator") return "an operator released its worker";
  if (lost_by == "release") return "its worker released it while shutting down";
  if (lost_by == "worker_stop") return "its worker stopped while holding it";
  return "how it was found was not recorded";
}

std::string FailureText(const AttemptInfo& a) {
  std::string text = "attempt " + std::to_string(a.attempt) + " failed: " + a.outcome;
  if (!a.error) return text;
  if (a.error->signal) text += " (signal " + std::to_string(*a.error->signal) + ")";
  if (a.error->exit_code) text += " (exit code " + std::to_string(*a.error->exit_code) + ")";
  if (!a.error->message.empty()) text += ": " + a.error->message;
  return text;
}

void AddAttempt(const AttemptInfo& a, const WorkerInfo* w, std::vector<TimelineEvent>* out) {
  const std::string n = std::to_string(a.attempt);
  Json claim = WorkerEvidence(a.worker, a.worker_name, w);
  claim["lease_token"] = a.lease_token;
  out->push_back({a.claimed_at, "claimed", a.attempt,
                  "attempt " + n + " claimed by " + WorkerText(a.worker, a.worker_name, w) +
                      ", lease token " + std::to_string(a.lease_token),
                  claim});
  if (a.started_at) {
    out->push_back({*a.started_at, "start_marked", a.attempt,
                    "attempt " + n + " marked started (at most once: it will not run again)",
                    Json::object()});
  }
  if (!a.finished_at) return;
  if (a.outcome == "succeeded") {
    out->push_back({*a.finished_at, "succeeded", a.attempt, "attempt " + n + " succeeded",
                    Json::object()});
  } else if (a.outcome == "lost" || a.outcome == "released") {
    const std::string message = a.error ? a.error->message : std::string();
    out->push_back({*a.finished_at, "lost", a.attempt,
                    "attempt " + n + " lost: " + LossText(a.lost_by) +
                        (message.empty() ? "" : " (" + message + ")"),
                    {{"lost_by", a.lost_by.empty() ? Json() : Json(a.lost_by)},
                     {"message", message}}});
  } else {
    Json evidence = {{"outcome", a.outcome}};
    if (a.error) {
      evidence["exit_code"] = a.error->exit_code ? Json(*a.error->exit_code) : Json();
      evidence["signal"] = a.error->signal ? Json(*a.error->signal) : Json();
    }
    out->push_back({*a.finished_at, "failed", a.attempt, FailureText(a), evidence});
  }
  if (a.runnable_at) {
    const Millis wait(*a.runnable_at - *a.finished_at);
    std::string text = "runnable again ";
    text += wait.count() <= 0 ? "at once" : "after a backoff of " + HumanDuration(wait);
    out->push_back({*a.runnable_at, "runnable", a.attempt, text,
                    {{"after_ms", std::max<int64_t>(wait.count(), 0)}}});
  }
}

// A job's end as it was: its state and counts then.
struct End {
  JobState state;
  std::optional<ErrorKind> last_error;
  int charged, max_attempts, crashes, max_crashes;
};

// Why it ended: the reason's code and the words after "the job is dead: ".
std::pair<const char*, std::string> EndWhy(const End& e) {
  const std::string attempts =
      "attempts " + std::to_string(e.charged) + "/" + std::to_string(e.max_attempts);
  const std::string kind = e.last_error ? ErrorKindName(*e.last_error) : "";
  switch (e.state) {
    case JobState::kExpired:
      return {"start_deadline", "its start deadline passed before a worker took it"};
    case JobState::kCancelled:
      return {"cancelled", "an operator cancelled it"};
    default:
      break;
  }
  if (e.last_error == ErrorKind::kCrashLoop) {
    return {"crash_loop", "a crash loop: crashes " + std::to_string(e.crashes) + "/" +
                              std::to_string(e.max_crashes) + ", " + attempts};
  }
  if (e.charged >= e.max_attempts) {
    return {"attempts_exhausted", "its attempts ran out (" + attempts +
                                      (kind.empty() ? "" : ", last error " + kind) + ")"};
  }
  return {"not_retried", "its last attempt" + (kind.empty() ? "" : " (" + kind + ")") +
                             " was not retried (retry none, or at-most-once after its start; " +
                             attempts + ")"};
}

TimelineEvent EndEvent(TimeMs at, const End& e) {
  const auto [reason, why] = EndWhy(e);
  return {at, "finished", 0,
          std::string("the job is ") + JobStateName(e.state) + ": " + why,
          {{"state", JobStateName(e.state)},
           {"reason", reason},
           {"last_error", e.last_error ? Json(ErrorKindName(*e.last_error)) : Json()},
           {"charged_attempts", e.charged},
           {"max_attempts", e.max_attempts},
           {"crashes", e.crashes},
           {"max_crashes", e.max_crashes}}};
}

void AddAction(const JobActionInfo& a, std::vector<TimelineEvent>* out) {
  // A retry cleared how the job had ended: its end, as the action found it.
  if (a.action == "retry" && IsTerminal(a.from) && a.from != JobState::kSucceeded &&
      a.finished_at) {
    out->push_back(EndEvent(*a.finished_at, End{a.from, a.last_error, a.charged, a.max_attempts,
                                                a.crashes, a.max_crashes}));
  }
  std::string by = " by " + a.actor;
  if (a.op > 0) by += " (operation " + std::to_string(a.op) + ")";
  std::string text;
  if (a.action == "retry") {
    text = "retried" + by + ": attempts and crashes reset, " +
           (a.fresh ? "checkpoint dropped (fresh)" : "checkpoint kept");
  } else if (a.action == "run_now") {
    text = "run now" + by + ": due at once, its attempts as they were";
  } else if (a.action == "cancel" && a.from == JobState::kRunning) {
    text = "cancel requested" + by + ": its worker stops it";
  } else if (a.action == "cancel") {
    text = "cancelled" + by;
  } else if (a.action == "release") {
    text = "its worker released" + by + ": its attempt is lost, and the job runs again";
  } else {
    text = a.action + by;
  }
  out->push_back({a.at, "operator", 0, text,
                  {{"action", a.action},
                   {"actor", a.actor},
                   {"op", a.op > 0 ? Json(a.op) : Json()},
                   {"fresh", a.fresh},
                   {"from", JobStateName(a.from)}}});
}

}  // namespace

JobTimeline BuildTimeline(JobInfo job, std::vector<FencedWriteInfo> fenced,
                          const std::vector<WorkerInfo>& workers,
                          const std::vector<JobActionInfo>& actions) {
  std::map<WorkerId, const WorkerInfo*> by_id;
  for (const WorkerInfo& w : workers) by_id[w.id] = &w;
  auto find = [&](WorkerId id) -> const WorkerInfo* {
    auto it = by_id.find(id);
    return it == by_id.end() ? nullptr : it->second;
  };

  JobTimeline t;
  std::vector<TimelineEvent>& ev = t.events;
  ev.push_back({job.created_at, "enqueued", 0,
                "enqueued on queue " + job.queue + " (task " + job.task + ")",
                {{"queue", job.queue}, {"task", job.task}}});
  std::map<int64_t, int> attempt_of_token;
  for (const AttemptInfo& a : job.attempts) {
    attempt_of_token[a.lease_token] = a.attempt;
    AddAttempt(a, find(a.worker), &ev);
  }
  for (const FencedWriteInfo& f : fenced) {
    auto it = attempt_of_token.find(f.lease_token);
    const int attempt = it == attempt_of_token.end() ? 0 : it->second;
    Json evidence = WorkerEvidence(f.worker, f.worker_name, find(f.worker));
    evidence["lease_token"] = f.lease_token;
    evidence["what"] = f.what;
    ev.push_back({f.at, "fenced_write", attempt,
                  "late write (" + f.what + ") from " +
                      WorkerText(f.worker, f.worker_name, find(f.worker)) + " under lease token " +
                      std::to_string(f.lease_token) + " refused: the lease had moved on",
                  evidence});
  }
  for (const JobActionInfo& a : actions) AddAction(a, &ev);
  // The job's own end, and why (its last attempt says only how that ended).
  if (IsTerminal(job.state) && job.state != JobState::kSucceeded && job.finished_at) {
    ev.push_back(EndEvent(*job.finished_at, End{job.state, job.last_error, job.charged,
                                                job.max_attempts, job.crashes,
                                                job.max_crashes}));
  }
  std::stable_sort(ev.begin(), ev.end(),
                   [](const TimelineEvent& a, const TimelineEvent& b) { return a.at < b.at; });
  t.job = std::move(job);
  t.fenced = std::move(fenced);
  return t;
}

}  // namespace warden
