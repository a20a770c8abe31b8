#include "timeline.h"

#include <fmt/core.h>

#include <algorithm>
#include <sstream>

#include "proc.h"
#include "warden/duration.h"

namespace chaos {

std::map<RunKey, Run> BuildRuns(const std::vector<LedgerEvent>& ledger,
                                const std::vector<PlannedJob>& workload,
                                const std::map<int64_t, int>& index_of_job) {
  std::map<RunKey, Run> runs;
  for (const LedgerEvent& e : ledger) {
    Run& r = runs[{e.job, e.token}];
    r.job = e.job;
    r.token = e.token;
    r.attempt = e.attempt;
    r.worker = e.worker;
    r.pid = e.pid;
    // Start, tick and ckpt lines are what the job did; an end line only
    // says how it ended (a handler returning from a refused checkpoint
    // after a long wait for the store writes one, having done nothing).
    if (e.event != "end") {
      r.times.push_back(e.ms);
      r.last = std::max(r.last, e.ms);
    }
    if (e.event == "start") {
      r.start = e.ms;
      r.start_step = e.step;
    } else if (e.event == "tick") {
      r.ticks.push_back(e.step);
      r.max_tick = std::max(r.max_tick, e.step);
    } else if (e.event == "ckpt") {
      auto it = index_of_job.find(e.job);
      const bool inproc = it != index_of_job.end() &&
                          !workload.at(static_cast<size_t>(it->second)).command;
      if (inproc) r.committed_ckpts.push_back(e.step);
    } else if (e.event == "end") {
      r.end = e.detail;
    }
  }
  return runs;
}

std::string Clock(int64_t ms) {
  return warden::FormatTime(ms).substr(11);
}

const warden::AttemptInfo* AttemptByToken(const warden::JobInfo& j, int64_t token) {
  for (const warden::AttemptInfo& a : j.attempts) {
    if (a.lease_token == token) return &a;
  }
  return nullptr;
}

std::string DescribeRun(const Run& r, const Timeline& tl) {
  return fmt::format("attempt {} token {} on {} (worker {}, pid {}) {}..{}{}",
                     r.attempt, r.token, tl.WorkerName(r.worker), r.worker,
                     r.pid, Clock(r.start), Clock(r.last),
                     r.end.empty() ? " (no end line)" : " end " + r.end);
}

std::string DescribeAttempt(const warden::AttemptInfo& a, const Timeline& tl) {
  return fmt::format(
      "attempt {} token {} on {} (worker {}) claimed {} finished {} {}",
      a.attempt, a.lease_token, tl.WorkerName(a.worker), a.worker,
      Clock(a.claimed_at), a.finished_at ? Clock(*a.finished_at) : "-",
      a.outcome);
}

Timeline::Timeline(const CheckInput& in) : in_(in) {
  for (const warden::WorkerInfo& w : in.workers) workers_[w.id] = &w;
  for (const FaultRecord& f : in.faults) {
    if (f.skipped || f.start_ms < 0 || !IsStoreFault(f.kind)) continue;
    int64_t end = f.end_ms < 0 ? f.start_ms : f.end_ms;
    // Sessions come back within a few hundred ms of being terminated.
    if (f.kind == FaultKind::kPgKillBackends) end = f.start_ms + 500;
    outages_.emplace_back(f.start_ms, end);
  }
  // Leadership, from each worker's log: a line starts with its time.
  for (const ProcRecord& p : in.procs) {
    std::istringstream log(proc::ReadFile(p.log_path + ".err"));
    std::string line;
    int64_t since = -1;  // leader since; -1: not leader
    const int64_t end = p.end_ms >= 0 ? p.end_ms : INT64_MAX;
    while (std::getline(log, line)) {
      const bool now = line.find(": now the maintenance leader") != std::string::npos;
      const bool no_longer = line.find(": no longer the maintenance leader") != std::string::npos;
      if (!now && !no_longer) continue;
      auto at = warden::ParseTime(line.substr(0, line.find(' ')));
      if (!at.has_value()) continue;
      if (now && since < 0) since = *at;
      if (no_longer && since >= 0) {
        leaders_.push_back({p.pid, since, *at});
        since = -1;
      }
    }
    if (since >= 0) leaders_.push_back({p.pid, since, end});
  }
}

bool Timeline::WasLeader(pid_t pid, int64_t at) const {
  for (const LeaderSpan& s : leaders_) {
    if (s.pid == pid && s.from <= at && at <= s.to) return true;
  }
  return false;
}

const Timeline::LeaderSpan* Timeline::LeaderFrom(int64_t at) const {
  const LeaderSpan* first = nullptr;
  for (const LeaderSpan& s : leaders_) {
    if (s.from >= at && (first == nullptr || s.from < first->from)) first = &s;
  }
  return first;
}

int64_t Timeline::WatchingSince(pid_t pid, int64_t at, int64_t reconnect) const {
  int64_t since = 0;
  for (int64_t id : WorkerIdsOf(pid, at)) since = std::max(since, workers_.at(id)->started_at);
  for (const FaultRecord& f : in_.faults) {
    if (f.skipped || f.start_ms < 0 || f.end_ms < 0 || f.end_ms > at) continue;
    if (f.kind == FaultKind::kFreezeWorker || f.kind == FaultKind::kFreezeHost ||
        f.kind == FaultKind::kPartition) {
      if (std::find(f.pids.begin(), f.pids.end(), pid) == f.pids.end()) continue;
      since = std::max(since, f.end_ms + (f.kind == FaultKind::kPartition ? reconnect : 0));
    }
  }
  for (const auto& [start, end] : outages_) {
    if (end <= at) since = std::max(since, end + reconnect);
  }
  return since;
}

const std::string& Timeline::WorkerName(int64_t worker_id) const {
  static const std::string unknown = "?";
  auto it = workers_.find(worker_id);
  return it == workers_.end() ? unknown : it->second->name;
}

const ProcRecord* Timeline::ProcOfWorker(int64_t worker_id) const {
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return nullptr;
  const warden::WorkerInfo& w = *it->second;
  const ProcRecord* best = nullptr;
  for (const ProcRecord& p : in_.procs) {
    if (p.pid != w.pid || p.spawn_ms > w.started_at + 2000) continue;
    if (p.end_ms >= 0 && p.end_ms < w.started_at - 2000) continue;
    if (best == nullptr || p.spawn_ms > best->spawn_ms) best = &p;
  }
  return best;
}

std::vector<int64_t> Timeline::WorkerIdsOf(pid_t pid, int64_t at) const {
  std::vector<int64_t> ids;
  for (const auto& [id, w] : workers_) {
    const ProcRecord* p = ProcOfWorker(id);
    if (p == nullptr || p->pid != pid || p->spawn_ms > at) continue;
    if (p->end_ms >= 0 && p->end_ms < at) continue;
    if (w->started_at <= at + 50) ids.push_back(id);
  }
  return ids;
}

std::string Timeline::StaleExcuse(int64_t worker_id, int64_t t,
                                  int64_t* late_ms) const {
  const ProcRecord* p = ProcOfWorker(worker_id);
  if (p == nullptr) return "";
  const int64_t margin = in_.options->stale_margin.count();
  for (const FaultRecord& f : in_.faults) {
    if (f.skipped || f.start_ms < 0) continue;
    if (std::find(f.pids.begin(), f.pids.end(), p->pid) == f.pids.end())
      continue;
    if (f.start_ms < p->spawn_ms || (p->end_ms >= 0 && f.start_ms > p->end_ms))
      continue;
    const bool freeze =
        f.kind == FaultKind::kFreezeWorker || f.kind == FaultKind::kFreezeHost;
    const int64_t end = f.end_ms < 0 ? INT64_MAX - margin : f.end_ms;
    if (freeze && f.start_ms <= t && t <= end + margin) {
      *late_ms = std::max<int64_t>(0, t - end);
      return std::string(FaultName(f.kind)) + " of " + p->name;
    }
  }
  if (p->end_ms >= 0 && p->end_ms <= t && t <= p->end_ms + margin) {
    *late_ms = t - p->end_ms;
    return "death of " + p->name;
  }
  return "";
}

std::string Timeline::LateStartExcuse(int64_t worker_id, int pid, int64_t t,
                                      int64_t ended) const {
  const int64_t margin = in_.options->stale_margin.count();
  const ProcRecord* p = ProcOfWorker(worker_id);
  if (p != nullptr && p->end_ms >= 0 && p->end_ms <= ended && p->end_ms <= t &&
      t <= p->end_ms + margin) {
    return "death of " + p->name;
  }
  for (const FaultRecord& f : in_.faults) {
    if (f.kind != FaultKind::kFreezeHost || f.skipped || f.start_ms < 0) continue;
    if (std::find(f.frozen_execd.begin(), f.frozen_execd.end(), pid) ==
        f.frozen_execd.end())
      continue;
    const int64_t end = f.end_ms < 0 ? INT64_MAX - margin : f.end_ms;
    if (f.start_ms <= t && t <= end + margin) {
      return fmt::format("host freeze of {} stopped pid {}, exec'd, before its first line",
                         f.target, pid);
    }
  }
  return "";
}

}  // namespace chaos
