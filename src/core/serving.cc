#include <algorithm>
#include <map>
#include <tuple>

#include "warden/duration.h"
#include "warden/text.h"
#include "warden/plural.h"
#include "warden/backlog.h"

namespace warden {
namespace {

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

// The claim's rule (ClaimableWhere in the stores): a queue it listens on,
// and a command job only with --allow-cmd, any other only for its tasks.
bool CanRun(const Serving& s, const std::string& queue, const std::string& task, bool command) {
  if (!s.queues.empty() && !Has(s.queues, queue)) return false;
  return command ? s.allow_commands : Has(s.tasks, task);
}

Serving ServingOf(const WorkerInfo& w) { return Serving{w.queues, w.tasks, w.allow_commands}; }

std::vector<BacklogGroup> Unserved(const std::vector<BacklogGroup>& backlog,
                                   const std::vector<Serving>& workers) {
  std::vector<BacklogGroup> out;
  for (const BacklogGroup& g : backlog) {
    if (g.state == JobState::kRunning) continue;
    const bool served = std::any_of(workers.begin(), workers.end(), [&](const Serving& w) {
      return CanRun(w, g.queue, g.task, g.command);
    });
    if (!served) out.push_back(g);
  }
  return out;
}

std::string DescribeGroups(const std::vector<BacklogGroup>& groups, TimeMs now) {
  // One entry per queue and task (states merged), biggest first.
  struct Entry {
    int64_t count = 0;
    TimeMs next_run_at = 0;
    bool any_due = false;
  };
  std::map<std::tuple<std::string, std::string, bool>, Entry> merged;
  for (const BacklogGroup& g : groups) {
    Entry& e = merged[{g.queue, g.command ? "" : g.task, g.command}];
    const bool due = g.state != JobState::kScheduled || g.next_run_at <= now;
    if (e.count == 0 || g.next_run_at < e.next_run_at) e.next_run_at = g.next_run_at;
    e.count += g.count;
    e.any_due |= due;
  }
  std::vector<std::pair<std::tuple<std::string, std::string, bool>, Entry>> sorted(
      merged.begin(), merged.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.count > b.second.count; });
  constexpr size_t kNamed = 5;
  std::string out;
  int64_t rest = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const auto& [key, e] = sorted[i];
    if (i >= kNamed) {
      rest += e.count;
      continue;
    }
    const auto& [queue, task, command] = key;
    std::string line = Plural(e.count, "job") + " on queue " + OneLine(queue, 60) +
                       (command ? " (command jobs)" : " of task " + OneLine(task, 60));
    if (!e.any_due) line += ", the next due in " + HumanDuration(Millis(e.next_run_at - now));
    out += (out.empty() ? "" : "; ") + line;
  }
  if (rest > 0) out += "; " + Plural(rest, "job") + " more";
  return out;
}

std::string WhoWouldRun(const JobSpec& spec) {
  const std::string queue = spec.queue == "default" ? "" : " --queues " + OneLine(spec.queue, 60);
  return spec.command.empty() ? "start one with: warden worker" + queue + " --task " +
                                    OneLine(spec.task, 60) + "=COMMAND"
                              : "start one with: warden worker" + queue + " --allow-cmd";
}

std::string NoWorkerRuns(const JobSpec& spec) {
  const std::string what = spec.command.empty() ? "task " + OneLine(spec.task, 60) : "command jobs";
  return "no active worker runs " + what + " on queue " + OneLine(spec.queue, 60) + " (" +
         WhoWouldRun(spec) + ")";
}

}  // namespace warden
