#include "cli/render.h"

#include <fmt/core.h>

#include <algorithm>
#include <sstream>

#include "cli/text_width.h"
#include "core/duration.h"
#include "core/json_text.h"
#include "core/plural.h"

namespace warden::cli {
namespace {

Json OptTime(const std::optional<TimeMs>& t) { return t ? Json(FormatTime(*t)) : Json(); }

std::string Text(const std::optional<TimeMs>& t) { return t ? FormatTime(*t) : "-"; }

constexpr JobState kAllJobStates[] = {
    JobState::kScheduled, JobState::kAvailable, JobState::kRunning,   JobState::kSucceeded,
    JobState::kRetryable, JobState::kDead,      JobState::kCancelled, JobState::kExpired};
constexpr WorkerState kAllWorkerStates[] = {WorkerState::kActive, WorkerState::kDraining,
                                            WorkerState::kStopped, WorkerState::kDead};

// A name column: as wide as its header and its longest name, at most `cap`
// columns unless `wide`.
template <typename Row, typename Get>
int ColumnWidth(const char* header, const std::vector<Row>& rows, Get get, int cap, bool wide) {
  int width = DisplayWidth(header);
  for (const Row& r : rows) width = std::max(width, DisplayWidth(get(r)));
  return wide ? width : std::min(width, std::max(cap, DisplayWidth(header)));
}

// The kept stderr tail, every line of it, indented under its heading.
void PrintTail(const std::string& tail) {
  fmt::print("    stderr ({} kept; a worker keeps the last 4 KiB of it):\n",
             Plural(static_cast<int64_t>(tail.size()), "byte"));
  std::istringstream lines(tail);
  for (std::string line; std::getline(lines, line);) {
    fmt::print("      {}\n", OneLine(line, line.size()));
  }
}

Json AttemptToJson(const AttemptInfo& a) {
  Json j = {{"attempt", a.attempt},
            {"worker", a.worker},
            {"lease_token", a.lease_token},
            {"claimed_at", FormatTime(a.claimed_at)},
            // Only at-most-once attempts record when they started (the
            // durable mark written before the job's code runs); an
            // at-least-once start is not written to the store (it would cost
            // a durable write per job on the way to its start, see claiming
            // ahead in the README). The key says what it holds: it was
            // `started_at`, null for every at-least-once attempt.
            {"start_marked_at", OptTime(a.started_at)},
            {"finished_at", OptTime(a.finished_at)},
            {"outcome", a.outcome},
            {"error", nullptr}};
  if (a.error) {
    j["error"] = {{"kind", ErrorKindName(a.error->kind)},
                  {"message", a.error->message},
                  {"exit_code", a.error->exit_code ? Json(*a.error->exit_code) : Json()},
                  {"signal", a.error->signal ? Json(*a.error->signal) : Json()},
                  {"stderr_tail", a.error->stderr_tail}};
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
              {"lease_token", j.lease_token},
              {"lease_expires_at", j.state == JobState::kRunning ? OptTime(j.lease_expires_at)
                                                                 : Json()},
              {"run_at", FormatTime(j.run_at)},
              {"start_deadline_at", OptTime(j.start_deadline_at)},
              {"created_at", FormatTime(j.created_at)},
              {"started_at", OptTime(j.started_at)},
              {"finished_at", OptTime(j.finished_at)},
              {"last_error", j.last_error ? Json(ErrorKindName(*j.last_error)) : Json()},
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
          {"running", w.running}};
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
            {"fenced_writes", s.fenced_writes},
            {"crash_loops", s.crash_loops}}}};
}

void PrintJobTable(const std::vector<JobInfo>& jobs, bool wide) {
  const int task = ColumnWidth("TASK", jobs, [](const JobInfo& j) { return j.task; }, 24, wide);
  const int queue =
      ColumnWidth("QUEUE", jobs, [](const JobInfo& j) { return j.queue; }, 20, wide);
  fmt::print("{:>8}  {:<10}  {}  {}  {:>7}  {:<24}  {}\n", "ID", "STATE", Cell("TASK", task),
             Cell("QUEUE", queue), "ATTEMPT", "CREATED", "LAST ERROR");
  for (const auto& j : jobs) {
    fmt::print("{:>8}  {:<10}  {}  {}  {:>3}/{:<3}  {:<24}  {}\n", j.id, JobStateName(j.state),
               Cell(j.task, task), Cell(j.queue, queue), j.attempt, j.max_attempts,
               FormatTime(j.created_at), j.last_error ? ErrorKindName(*j.last_error) : "");
  }
}

void PrintJobDetail(const JobInfo& j) {
  fmt::print("job {} ({}) on queue {}: {}\n", j.id, j.task, j.queue, JobStateName(j.state));
  if (!j.command.empty()) fmt::print("  command:   {}\n", j.command);
  // JsonText: what a store returns may hold bytes that are not UTF-8.
  fmt::print("  payload:   {}\n", JsonText(j.payload));
  fmt::print("  delivery:  {}, retry {}, attempt {} ({} charged of {}), crashes {} of {}\n",
             DeliveryName(j.delivery), RetryPolicyName(j.retry), j.attempt, j.charged,
             j.max_attempts, j.crashes, j.max_crashes);
  fmt::print("  limits:    timeout {}, lease {}, start deadline {}\n", FormatDuration(j.timeout),
             j.lease ? FormatDuration(*j.lease) : "the worker's", Text(j.start_deadline_at));
  fmt::print("  created:   {}   finished: {}\n", FormatTime(j.created_at),
             Text(j.finished_at));
  if (!j.checkpoint.is_null()) fmt::print("  checkpoint: {}\n", JsonText(j.checkpoint));
  if (!j.result.is_null()) fmt::print("  result:    {}\n", JsonText(j.result));
  for (const auto& a : j.attempts) {
    fmt::print("  attempt {}: worker {} token {} claimed {}{} finished {} -> {}\n", a.attempt,
               a.worker, a.lease_token, FormatTime(a.claimed_at),
               a.started_at ? " start marked " + FormatTime(*a.started_at) : "",
               Text(a.finished_at), a.outcome);
    if (a.error) {
      fmt::print("    {}\n", a.error->message);
      if (!a.error->stderr_tail.empty()) PrintTail(a.error->stderr_tail);
    }
  }
}

void PrintWorkerTable(const std::vector<WorkerInfo>& workers, bool wide) {
  const int name =
      ColumnWidth("NAME", workers, [](const WorkerInfo& w) { return w.name; }, 24, wide);
  const int node =
      ColumnWidth("NODE", workers, [](const WorkerInfo& w) { return w.node; }, 20, wide);
  fmt::print("{:>6}  {}  {:<9}  {}  {:>7}  {:>7}  {:<24}  {}\n", "ID", Cell("NAME", name),
             "STATE", Cell("NODE", node), "PID", "RUNNING", "LAST HEARTBEAT", "NOTE");
  for (const auto& w : workers) {
    fmt::print("{:>6}  {}  {:<9}  {}  {:>7}  {:>7}  {:<24}  {}\n", w.id, Cell(w.name, name),
               WorkerStateName(w.state), Cell(w.node, node), w.pid, w.running,
               FormatTime(w.last_heartbeat), w.death_reason);
  }
}

void PrintStats(const Stats& s) {
  fmt::print("jobs:");
  for (const auto& [state, n] : s.jobs) fmt::print(" {}={}", state, n);
  fmt::print("\nworkers:");
  for (const auto& [state, n] : s.workers) fmt::print(" {}={}", state, n);
  fmt::print("\nrecovery: {} rescued, {} fenced off, {}\n", Plural(s.rescued, "attempt"),
             Plural(s.fenced_writes, "write"), Plural(s.crash_loops, "crash loop"));
}

}  // namespace warden::cli
