#include "overlap.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <utility>

namespace chaos {
namespace {

struct Event {
  int64_t t = 0;
  bool start = false;  // ends first at one moment: touching spans do not meet
  size_t span = 0;
};

constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

// How long in [t, end) `live` spans were at (or past) the limit in force.
int64_t AtLimitMs(const Limit& limit, int live, int64_t t, int64_t end) {
  std::vector<int64_t> cuts{t};
  for (const LimitChange& c : limit.changes) {
    for (int64_t x : {c.from, c.to + 1}) {
      if (x > t && x < end) cuts.push_back(x);
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.push_back(end);
  int64_t ms = 0;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    if (live >= limit.At(cuts[i])) ms += cuts[i + 1] - cuts[i];
  }
  return ms;
}

// One key's spans, swept in time order.
void Sweep(const std::vector<Span>& spans, const std::vector<size_t>& mine, const Limit& limit,
           KeyLoad* load) {
  std::vector<Event> events;
  events.reserve(mine.size() * 2);
  for (size_t i : mine) {
    events.push_back({spans[i].from, true, i});
    events.push_back({spans[i].to, false, i});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.t != b.t ? a.t < b.t : (a.start != b.start ? !a.start : a.span < b.span);
  });
  std::set<std::pair<int64_t, size_t>> alive;  // (from, span)
  // When each live span alive now was admitted. Every one of them was
  // already open at the latest of these claims (a run lives within its
  // attempt, which opens at its claim), so that claim counted them all:
  // the limit of its moment bounds them. A span admitted earlier under a
  // lower limit that starts its run late is judged with the rest by that
  // latest claim, not by its own (a raise between the two admitted more).
  // Stale spans are no longer the store's, so that argument does not hold
  // for them: a stale overlap is judged by the latest claim of all.
  std::multiset<int64_t> admitted, admitted_all;
  int live = 0, stale = 0;
  std::optional<Crowd> over, stale_over;  // the periods under way
  auto at_peak = [&] {
    std::vector<size_t> tags;
    for (const auto& [from, i] : alive) tags.push_back(spans[i].tag);
    return tags;
  };
  // Opens, extends or closes the period `cur` as of moment `t`.
  auto track = [&](std::optional<Crowd>& cur, bool crowded, int64_t judged, bool by_live,
                   int64_t t, std::vector<Crowd>* into) {
    if (!crowded) {
      if (cur) {
        cur->to = t;
        into->push_back(std::move(*cur));
        cur.reset();
      }
      return;
    }
    if (!cur) {
      cur = Crowd{};
      cur->from = t;
      cur->limit = judged;
    }
    const int total = live + stale;
    const bool higher = by_live ? (live > cur->peak_live ||
                                   (live == cur->peak_live && total > cur->peak))
                                : total > cur->peak;
    if (higher) {
      cur->peak = total;
      cur->peak_live = live;
      cur->peak_at = t;
      cur->at_peak = at_peak();
    }
  };
  for (size_t e = 0; e < events.size();) {
    const int64_t t = events[e].t;
    for (; e < events.size() && events[e].t == t; ++e) {
      const Span& s = spans[events[e].span];
      const int64_t claim = s.judged_at.value_or(s.from);
      if (events[e].start) {
        (s.stale ? stale : live) += 1;
        alive.insert({s.from, events[e].span});
        if (!s.stale) admitted.insert(claim);
        admitted_all.insert(claim);
      } else {
        (s.stale ? stale : live) -= 1;
        alive.erase({s.from, events[e].span});
        if (!s.stale) admitted.erase(admitted.find(claim));
        admitted_all.erase(admitted_all.find(claim));
      }
    }
    const auto limit_of = [&](const std::multiset<int64_t>& claims) {
      return claims.empty() ? kNoLimit : limit.At(*claims.rbegin());
    };
    const int64_t judged = limit_of(admitted), judged_all = limit_of(admitted_all);
    // These counts hold from t to the next event.
    if (e < events.size()) load->at_limit_ms += AtLimitMs(limit, live, t, events[e].t);
    load->peak_live = std::max(load->peak_live, live);
    load->peak = std::max(load->peak, live + stale);
    track(over, live > judged, judged, true, t, &load->over);
    track(stale_over, live <= judged && live + stale > judged_all, judged_all, false, t,
          &load->stale_over);
  }
  // Every span ends, so the last moment closed both periods.
}

}  // namespace

int64_t Limit::At(int64_t t) const {
  int64_t now = initial;
  for (const LimitChange& c : changes) {
    if (t < c.from) break;
    if (t <= c.to) return std::max(now, c.limit);
    now = c.limit;
  }
  return now;
}

std::map<std::string, KeyLoad> CountOverlaps(const std::vector<Span>& spans,
                                             const std::map<std::string, Limit>& limits) {
  std::map<std::string, KeyLoad> out;
  std::map<std::string, std::vector<size_t>> by_key;
  for (const auto& [key, limit] : limits) out[key].limit = limit.initial;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].to <= spans[i].from || limits.count(spans[i].key) == 0) continue;
    by_key[spans[i].key].push_back(i);
  }
  for (const auto& [key, mine] : by_key) {
    KeyLoad& load = out[key];
    load.spans = static_cast<int>(mine.size());
    Sweep(spans, mine, limits.at(key), &load);
  }
  return out;
}

}  // namespace chaos
