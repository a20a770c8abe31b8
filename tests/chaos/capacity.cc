// Capacity checks (timeline.h, CheckCapacity): how many executions of one
// key were alive at once, from the ledger and from the store's attempts.
#include <fmt/core.h>

#include <algorithm>
#include <optional>

#include "overlap.h"
#include "timeline.h"

namespace chaos {

using warden::AttemptInfo;
using warden::JobInfo;

namespace {

constexpr size_t kMaxEvidence = 12;
constexpr int kEvidencePerSource = 4;  // so the ledger's cannot hide the store's
constexpr size_t kMaxDetails = 4;

void Flag(Invariant& inv, const std::string& line, int* shown) {
  inv.ok = false;
  ++inv.violations;
  if (inv.evidence.size() < kMaxEvidence && (*shown)++ < kEvidencePerSource) {
    inv.evidence.push_back(line);
  }
}

}  // namespace

CapacityLoads CheckCapacity(const CheckInput& in, const Timeline& tl,
                            const std::map<RunKey, Run>& runs,
                            const std::map<RunKey, int64_t>& stale_since,
                            const CapacityCheck& check, Invariant* inv) {
  CapacityLoads out;
  std::map<int64_t, const JobInfo*> job_by_id;
  for (const JobInfo& j : in.jobs) job_by_id[j.id] = &j;

  // The ledger: a run from its first to its last sign of life (a run that
  // left one line holds its millisecond), cut where the store ended its
  // attempt when invariant 6 excused what it did after.
  std::vector<Span> spans;
  std::vector<const Run*> run_of;  // by tag
  for (const auto& [key, r] : runs) {
    const std::string k = check.key_of_run(r);
    if (k.empty() || r.times.empty()) continue;
    const int64_t from =
        r.start >= 0 ? r.start : *std::min_element(r.times.begin(), r.times.end());
    const int64_t to = std::max(r.last, from) + (r.last > from ? 0 : 1);
    const size_t tag = run_of.size();
    run_of.push_back(&r);
    // Judged by the limit of its claim (a resize may come between the two).
    std::optional<int64_t> claimed;
    if (auto j = job_by_id.find(r.job); j != job_by_id.end()) {
      if (const AttemptInfo* a = AttemptByToken(*j->second, r.token)) claimed = a->claimed_at;
    }
    auto stale = stale_since.find(key);
    if (stale == stale_since.end()) {
      spans.push_back(Span{k, from, to, false, tag, claimed});
      continue;
    }
    const int64_t cut = std::clamp(stale->second, from, to);
    spans.push_back(Span{k, from, cut, false, tag, claimed});
    spans.push_back(Span{k, cut, to, true, tag, claimed});
  }
  out.ledger = CountOverlaps(spans, check.limits);

  auto describe_run = [&](size_t tag) {
    const Run& r = *run_of[tag];
    std::string line = fmt::format("job {} {}", r.job, DescribeRun(r, tl));
    if (auto s = stale_since.find({r.job, r.token}); s != stale_since.end()) {
      int64_t late = 0;
      const std::string why = tl.StaleExcuse(r.worker, r.last, &late);
      line += fmt::format(" [stale: its attempt ended {}; {}]", Clock(s->second),
                          why.empty() ? "excused under 6" : why);
    }
    return line;
  };
  int shown = 0;
  for (const auto& [key, load] : out.ledger) {
    for (const Crowd& c : load.over) {
      std::string line = fmt::format(
          "{} {} (ledger): {} runs alive at {} ({} of them live; limit {}), "
          "over it {}..{}:",
          check.what, key, c.peak, Clock(c.peak_at), c.peak_live, c.limit,
          Clock(c.from), Clock(c.to));
      for (size_t tag : c.at_peak) {
        line += " | ";
        line += describe_run(tag);
      }
      Flag(*inv, line, &shown);
    }
    for (const Crowd& c : load.stale_over) {
      ++out.stale_overlaps;
      out.stale_overlap_max_ms = std::max(out.stale_overlap_max_ms, c.to - c.from);
      out.stale_overlap_peak = std::max(out.stale_overlap_peak, c.peak);
      if (inv->details.size() >= kMaxDetails) continue;
      std::string line = fmt::format(
          "stale overlap, {} {}: {} runs alive at {} ({} live; limit {}) for {} ms:",
          check.what, key, c.peak, Clock(c.peak_at), c.peak_live, c.limit,
          c.to - c.from);
      for (size_t tag : c.at_peak) {
        line += " | ";
        line += describe_run(tag);
      }
      inv->details.push_back(line);
    }
  }

  // The store: an attempt is open from its claim until its outcome (or
  // its recovery) committed, as the claim counts running jobs. No excuse.
  spans.clear();
  std::vector<std::pair<const JobInfo*, const AttemptInfo*>> attempt_of;
  for (const JobInfo& j : in.jobs) {
    for (const AttemptInfo& a : j.attempts) {
      const std::string k = check.key_of_attempt(j, a);
      if (k.empty()) continue;
      const int64_t to = a.finished_at ? std::max(*a.finished_at, a.claimed_at) : INT64_MAX;
      spans.push_back(Span{k, a.claimed_at, to, false, attempt_of.size(), {}});
      attempt_of.emplace_back(&j, &a);
    }
  }
  out.store = CountOverlaps(spans, check.limits);
  shown = 0;
  for (const auto& [key, load] : out.store) {
    for (const Crowd& c : load.over) {
      std::string line = fmt::format(
          "{} {} (store): {} attempts open at {} (limit {}), over it {}..{}:", check.what,
          key, c.peak, Clock(c.peak_at), c.limit, Clock(c.from),
          c.to == INT64_MAX ? "-" : Clock(c.to));
      for (size_t tag : c.at_peak) {
        const auto& [j, a] = attempt_of[tag];
        line += fmt::format(" | job {} {}", j->id, DescribeAttempt(*a, tl));
      }
      Flag(*inv, line, &shown);
    }
  }
  return out;
}

}  // namespace chaos
