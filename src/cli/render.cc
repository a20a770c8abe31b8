#include "cli/render.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "cli/text_width.h"
#include "warden/duration.h"
#include "warden/text.h"
#include "warden/plural.h"
#include "warden/worker_silence.h"

namespace warden::cli {
namespace {

std::string Text(const std::optional<TimeMs>& t) { return t ? FormatTime(*t) : "-"; }


// A name column: as wide as its header and its longest name, at most `cap`
// columns unless `wide`.
template <typename Row, typename Get>
int ColumnWidth(const char* header, const std::vector<Row>& rows, Get get, int cap, bool wide) {
  int width = DisplayWidth(header);
  for (const Row& r : rows) width = std::max(width, DisplayWidth(get(r)));
  return wide ? width : std::min(width, std::max(cap, DisplayWidth(header)));
}

// A kept output tail, every line of it, indented under its heading.
void PrintTail(const char* stream, const std::string& tail) {
  fmt::print("    {} ({} kept; a worker keeps the last 4 KiB of it):\n", stream,
             Plural(static_cast<int64_t>(tail.size()), "byte"));
  std::istringstream lines(tail);
  for (std::string line; std::getline(lines, line);) {
    fmt::print("      {}\n", OneLine(line, line.size()));
  }
}

// Text from the database on one line, whole.
std::string Whole(const std::string& text) { return OneLine(text, text.size()); }

const WorkerInfo* FindWorker(const std::vector<WorkerInfo>& workers, WorkerId id) {
  for (const WorkerInfo& w : workers) {
    if (w.id == id) return &w;
  }
  return nullptr;
}

// A worker as people know it: its name, else (its row pruned) its id.
std::string WorkerText(WorkerId id, const std::string& name) {
  return name.empty() ? fmt::format("#{}", id) : Whole(name) + fmt::format(" (id {})", id);
}

// The last error: its kind, and its message when there is one.
std::string LastErrorText(const JobInfo& j) {
  if (!j.last_error) return "";
  std::string text = ErrorKindName(*j.last_error);
  if (!j.last_error_message.empty()) text += ": " + j.last_error_message;
  return text;
}

// What the time column says of a job: when it will run, how long it has
// run, or how long it took and when it ended.
std::string WhenText(const JobInfo& j, TimeMs now) {
  switch (j.state) {
    case JobState::kScheduled:
    case JobState::kRetryable:
      return j.run_at + 999 < now ? "due " + HumanWhen(j.run_at, now)
                                  : "runs " + HumanWhen(j.run_at, now);
    case JobState::kAvailable:
      return "ready " + HumanWhen(j.run_at, now);
    case JobState::kRunning:
      return j.started_at ? "for " + HumanDuration(Millis(now - *j.started_at)) : "";
    default:
      break;
  }
  if (!j.finished_at) return "";
  const std::string ended = HumanWhen(*j.finished_at, now);
  if (!j.started_at || *j.started_at > *j.finished_at) return ended;
  return "took " + HumanDuration(Millis(*j.finished_at - *j.started_at)) + ", " + ended;
}

// `line` without the spaces that pad its last columns.
void PrintLine(std::string line) {
  line.erase(line.find_last_not_of(' ') + 1);
  fmt::print("{}\n", line);
}

}  // namespace

std::string HumanWhen(TimeMs t, TimeMs now) {
  const int64_t seconds = (t > now ? t - now : now - t) / 1000;
  if (seconds == 0) return "now";
  // Whole seconds: HumanDuration's tenths would always read ".0" here.
  const std::string d =
      seconds < 60 ? std::to_string(seconds) + "s" : HumanDuration(Millis(seconds * 1000));
  return t > now ? "in " + d : d + " ago";
}

void PrintJobTable(const std::vector<JobInfo>& jobs, int64_t total, TimeMs now, bool wide,
                   const std::vector<WorkerInfo>& live_workers) {
  const int task = ColumnWidth("TASK", jobs, [](const JobInfo& j) { return j.task; }, 24, wide);
  const int queue =
      ColumnWidth("QUEUE", jobs, [](const JobInfo& j) { return j.queue; }, 20, wide);
  // Only running jobs name their worker: a finished job's is history (see
  // `jobs show`).
  // A silent worker says so (warden/worker_silence.h): its job may be lost.
  auto worker_of = [&](const JobInfo& j) {
    if (j.state != JobState::kRunning || !j.worker) return std::string();
    std::string text = j.worker_name.empty() ? fmt::format("#{}", *j.worker) : j.worker_name;
    const WorkerInfo* w = FindWorker(live_workers, *j.worker);
    if (w && w->silent_for) text += " (silent " + HumanDuration(*w->silent_for) + ")";
    return text;
  };
  const int worker = ColumnWidth("WORKER", jobs, worker_of, 20, wide);
  std::vector<std::string> created, when, of_max;
  int created_width = DisplayWidth("CREATED"), when_width = DisplayWidth("WHEN");
  int of_max_width = 3;  // "ATTEMPT" is "  2/" and this: the slashes line up
  for (const JobInfo& j : jobs) {
    const std::string attempts = AttemptsText(j);
    of_max.push_back(attempts.substr(attempts.find('/') + 1));
    of_max_width = std::max(of_max_width, DisplayWidth(of_max.back()));
    created.push_back(HumanWhen(j.created_at, now));
    when.push_back(WhenText(j, now));
    created_width = std::max(created_width, DisplayWidth(created.back()));
    when_width = std::max(when_width, DisplayWidth(when.back()));
  }
  PrintLine(fmt::format("{:>8}  {:<10}  {}  {}  {}  {}  {}  {}  {}", "ID", "STATE",
                        Cell("TASK", task), Cell("QUEUE", queue),
                        Cell("ATTEMPT", 4 + of_max_width),
                        Cell("CREATED", created_width), Cell("WHEN", when_width),
                        Cell("WORKER", worker), "LAST ERROR"));
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobInfo& j = jobs[i];
    // The last column is as wide as it needs, up to 60 columns (whole with
    // --wide), on one line.
    const std::string error = OneLine(LastErrorText(j), std::string::npos);
    const int error_width = wide ? DisplayWidth(error) : std::min(DisplayWidth(error), 60);
    PrintLine(fmt::format("{:>8}  {:<10}  {}  {}  {:>3}/{}  {}  {}  {}  {}", j.id,
                          JobStateName(j.state), Cell(j.task, task), Cell(j.queue, queue),
                          j.charged, Cell(of_max[i], of_max_width),
                          Cell(created[i], created_width),
                          Cell(when[i], when_width), Cell(worker_of(j), worker),
                          Cell(error, error_width)));
  }
  if (total > static_cast<int64_t>(jobs.size())) {
    fmt::print("showing {} of {} jobs, newest first (--limit N shows more)\n", jobs.size(),
               total);
  }
}

void PrintJobDetail(const JobInfo& j, TimeMs now, const std::vector<WorkerInfo>& live_workers) {
  fmt::print("job {} ({}) on queue {}: {}\n", j.id, Whole(j.task), Whole(j.queue),
             JobStateName(j.state));
  if (!j.command.empty()) fmt::print("  command:   {}\n", Whole(j.command));
  // JsonText: what a store returns may hold bytes that are not UTF-8.
  fmt::print("  payload:   {}\n", JsonText(j.payload));
  fmt::print("  priority:  {}, run at {} ({})\n", j.priority, FormatTime(j.run_at),
             HumanWhen(j.run_at, now));
  fmt::print("  delivery:  {}, retry {}, attempts {}, crashes {} of {}\n", DeliveryName(j.delivery),
             RetryPolicyName(j.retry), AttemptsText(j), j.crashes, j.max_crashes);
  fmt::print("  limits:    timeout {}, lease {}, start deadline {}\n", FormatDuration(j.timeout),
             j.lease ? FormatDuration(*j.lease) : "the worker's", Text(j.start_deadline_at));
  fmt::print("  keys:      unique {}, concurrency {}\n",
             j.unique_key.empty() ? "-" : Whole(j.unique_key),
             j.concurrency_key.empty() ? "-" : Whole(j.concurrency_key));
  if (j.worker) {
    const WorkerInfo* w = j.state == JobState::kRunning ? FindWorker(live_workers, *j.worker)
                                                        : nullptr;
    fmt::print("  worker:    {}{}\n", WorkerText(*j.worker, j.worker_name),
               w && w->silent_for ? ", silent: " + SilenceText(*w) : "");
  }
  fmt::print("  created:   {} ({})   finished: {}\n", FormatTime(j.created_at),
             HumanWhen(j.created_at, now), Text(j.finished_at));
  if (j.last_error) fmt::print("  last error: {}\n", Whole(LastErrorText(j)));
  const bool waiting = j.state == JobState::kAvailable || j.state == JobState::kRetryable;
  if (waiting && j.avoid_node_until && *j.avoid_node_until > now) {
    fmt::print("  avoids:    node {} until {} ({}): its last attempt was lost or crashed "
               "there\n",
               Whole(j.avoid_node), FormatTime(*j.avoid_node_until),
               HumanWhen(*j.avoid_node_until, now));
  }
  if (!j.checkpoint.is_null()) fmt::print("  checkpoint: {}\n", JsonText(j.checkpoint));
  if (!j.result.is_null()) fmt::print("  result:    {}\n", JsonText(j.result));
  for (const auto& a : j.attempts) {
    fmt::print("  attempt {}: worker {} token {} claimed {}{} finished {} -> {}\n", a.attempt,
               WorkerText(a.worker, a.worker_name), a.lease_token, FormatTime(a.claimed_at),
               a.started_at ? " start marked " + FormatTime(*a.started_at) : "",
               Text(a.finished_at), a.outcome);
    if (a.error) {
      fmt::print("    {}\n", Whole(a.error->message));
      if (!a.error->stdout_tail.empty()) PrintTail("stdout", a.error->stdout_tail);
      if (!a.error->stderr_tail.empty()) PrintTail("stderr", a.error->stderr_tail);
    }
    std::istringstream notes(a.note);
    for (std::string line; std::getline(notes, line);) {
      fmt::print("    note: {}\n", OneLine(line, line.size()));
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
    // A live worker whose heartbeat went unrenewed past its keepalive is
    // shown silent whatever its row says (a display: recovery decides).
    std::string note = w.death_reason;
    if (w.node_disabled) note = "its node takes no work (disabled or removed): claims nothing";
    if (w.MaintenanceOnly() && w.state == WorkerState::kActive) {
      note = "maintenance only (warden serve): claims nothing";
    }
    if (w.silent_for) note = SilenceText(w) + (note.empty() ? "" : "; " + note);
    fmt::print("{:>6}  {}  {:<9}  {}  {:>7}  {:>7}  {:<24}  {}\n", w.id, Cell(w.name, name),
               w.silent_for ? "silent" : WorkerStateName(w.state), Cell(w.node, node), w.pid,
               w.running, FormatTime(w.last_heartbeat), note);
  }
}

TimeMs NowMs() {
  return std::chrono::duration_cast<Millis>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void PrintUnserved(std::FILE* out, const std::vector<BacklogGroup>& unserved, TimeMs now) {
  if (unserved.empty()) return;
  fmt::print(out, "{}waiting for a worker (no active worker runs them): {}\n",
             out == stderr ? "warden: note: " : "", DescribeGroups(unserved, now));
}

void PrintStats(const Stats& s, const std::vector<BacklogGroup>& unserved, TimeMs now) {
  fmt::print("jobs:");
  for (const auto& [state, n] : s.jobs) fmt::print(" {}={}", state, n);
  fmt::print("\nworkers:");
  for (const auto& [state, n] : s.workers) fmt::print(" {}={}", state, n);
  fmt::print("\nrecovery: {} rescued, {} fenced off, {}\n", Plural(s.rescued, "attempt"),
             Plural(s.fenced_writes, "write"), Plural(s.crash_loops, "crash loop"));
  PrintUnserved(stdout, unserved, now);
}

}  // namespace warden::cli
