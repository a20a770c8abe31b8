#include "warden/invariants.h"

#include <algorithm>
#include <map>

namespace warden {
namespace {

constexpr size_t kMaxEvidence = 12;

void Flag(InvariantResult& r, std::string line) {
  ++r.violations;
  if (r.evidence.size() < kMaxEvidence) r.evidence.push_back(std::move(line));
}

// Appends its parts: GCC 12 warns (-Wrestrict) on chains of operator+.
template <typename... Parts>
std::string Str(const Parts&... parts) {
  std::string out;
  (out.append(parts), ...);
  return out;
}

std::string N(int64_t n) { return std::to_string(n); }
std::string Job(JobId id) { return Str("job ", N(id)); }

InvariantResult Named(const char* name) {
  InvariantResult r;
  r.name = name;
  return r;
}

InvariantResult NoneLostNoneStuck(const InvariantInput& in,
                                  const std::map<JobId, const JobInfo*>& by_id) {
  InvariantResult r = Named("every job reached one terminal state (none lost, none stuck)");
  for (JobId id : in.acknowledged) {
    if (!by_id.count(id)) Flag(r, Str(Job(id), " was acknowledged but is not in the store"));
  }
  if (!in.drained) return r;
  for (const JobInfo& j : in.jobs) {
    if (!IsTerminal(j.state)) {
      Flag(r, Str(Job(j.id), " is still ", JobStateName(j.state), " (attempt ", N(j.attempt),
                  ")"));
    }
  }
  return r;
}

InvariantResult OneCompletion(const InvariantInput& in) {
  InvariantResult r = Named("at most one committed completion per job");
  std::set<std::pair<JobId, int64_t>> finished;
  for (const LedgerRun& run : in.runs) {
    if (run.finished) finished.insert({run.job, run.token});
  }
  for (const JobInfo& j : in.jobs) {
    int succeeded = 0;
    for (const AttemptInfo& a : j.attempts) {
      if (a.outcome != "succeeded") continue;
      ++succeeded;
      if (in.ledger_sees_ends && !finished.count({j.id, a.lease_token})) {
        Flag(r, Str(Job(j.id), " attempt ", N(a.attempt), " (token ", N(a.lease_token),
                    ") succeeded, but no run with its token finished"));
      }
    }
    const int want = j.state == JobState::kSucceeded ? 1 : 0;
    if (succeeded > 1 || succeeded != want) {
      Flag(r, Str(Job(j.id), " is ", JobStateName(j.state), " with ", N(succeeded),
                  " succeeded attempts"));
    }
  }
  return r;
}

InvariantResult AtMostOnceStartsOnce(const InvariantInput& in,
                                     const std::map<JobId, const JobInfo*>& by_id) {
  InvariantResult r = Named("no at-most-once job started twice (ledger)");
  std::map<JobId, int> starts;
  for (const LedgerRun& run : in.runs) ++starts[run.job];
  for (const auto& [id, n] : starts) {
    auto it = by_id.find(id);
    if (it == by_id.end() || it->second->delivery != Delivery::kAtMostOnce) continue;
    if (n > 1 && !in.retried_by_operator.count(id)) {
      Flag(r, Str("at-most-once ", Job(id), " started ", N(n), " times"));
    }
  }
  // The store's side: its durable "started" marks.
  for (const JobInfo& j : in.jobs) {
    if (j.delivery != Delivery::kAtMostOnce || in.retried_by_operator.count(j.id)) continue;
    int marked = 0;
    for (const AttemptInfo& a : j.attempts) marked += a.started_at.has_value() ? 1 : 0;
    if (marked > 1) {
      Flag(r, Str("at-most-once ", Job(j.id), " has ", N(marked), " start marks in the store"));
    }
  }
  return r;
}

InvariantResult OneRunningPerKey(const InvariantInput& in) {
  InvariantResult r = Named("at most one running attempt per concurrency key");
  if (!in.store_clock_steady) return r;
  struct Span {
    TimeMs from, to;
    JobId job;
    int attempt;
  };
  std::map<std::string, std::vector<Span>> by_key;
  for (const JobInfo& j : in.jobs) {
    if (j.concurrency_key.empty()) continue;
    for (const AttemptInfo& a : j.attempts) {
      by_key[j.concurrency_key].push_back(
          {a.claimed_at, a.finished_at.value_or(INT64_MAX), j.id, a.attempt});
    }
  }
  for (auto& [key, spans] : by_key) {
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.from < b.from; });
    TimeMs reach = INT64_MIN;  // the latest end so far
    const Span* holder = nullptr;
    for (const Span& s : spans) {
      if (holder != nullptr && s.from < reach) {
        Flag(r, Str("key '", key, "': ", Job(s.job), " attempt ", N(s.attempt), " claimed while ",
                    Job(holder->job), " attempt ", N(holder->attempt), " held it"));
      }
      if (s.to > reach) {
        reach = s.to;
        holder = &s;
      }
    }
  }
  return r;
}

InvariantResult RunsAreAttempts(const InvariantInput& in,
                                const std::map<JobId, const JobInfo*>& by_id) {
  InvariantResult r = Named("every run in the ledger is an attempt of the store");
  for (const LedgerRun& run : in.runs) {
    auto it = by_id.find(run.job);
    const AttemptInfo* attempt = nullptr;
    if (it != by_id.end()) {
      for (const AttemptInfo& a : it->second->attempts) {
        if (a.attempt == run.attempt) attempt = &a;
      }
    }
    const std::string what =
        Str(Job(run.job), " attempt ", N(run.attempt), " token ", N(run.token));
    if (attempt == nullptr) {
      Flag(r, Str(what, " ran, but the store has no such attempt"));
    } else if (attempt->lease_token != run.token) {
      Flag(r, Str(what, " ran, but the store's attempt has token ", N(attempt->lease_token)));
    } else if (run.worker != 0 && attempt->worker != run.worker) {
      Flag(r, Str(what, " ran on worker ", N(run.worker), ", but the store's attempt is worker ",
                  N(attempt->worker), "'s"));
    }
  }
  return r;
}

}  // namespace

std::vector<InvariantResult> CheckInvariants(const InvariantInput& in) {
  std::map<JobId, const JobInfo*> by_id;
  for (const JobInfo& j : in.jobs) by_id[j.id] = &j;
  return {NoneLostNoneStuck(in, by_id), OneCompletion(in), AtMostOnceStartsOnce(in, by_id),
          OneRunningPerKey(in), RunsAreAttempts(in, by_id)};
}

std::vector<std::string> RunningKeyConflicts(const std::vector<JobInfo>& jobs) {
  std::map<std::string, std::vector<JobId>> running;
  for (const JobInfo& j : jobs) {
    if (j.state == JobState::kRunning && !j.concurrency_key.empty()) {
      running[j.concurrency_key].push_back(j.id);
    }
  }
  std::vector<std::string> out;
  for (const auto& [key, ids] : running) {
    if (ids.size() < 2) continue;
    std::string line = Str("key '", key, "' is held by running jobs");
    for (JobId id : ids) line += Str(" ", N(id));
    out.push_back(line);
  }
  return out;
}

std::string DescribeViolations(const std::vector<InvariantResult>& results) {
  std::string out;
  for (const InvariantResult& r : results) {
    for (const std::string& e : r.evidence) out += Str(r.name, ": ", e, "\n");
    if (r.violations > static_cast<int>(r.evidence.size())) {
      out += Str(r.name, ": and ", N(r.violations - static_cast<int>(r.evidence.size())),
                 " more\n");
    }
  }
  return out;
}

}  // namespace warden
