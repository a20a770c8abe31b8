#include "overlap.h"

#include <algorithm>
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

// One key's spans, swept in time order.
void Sweep(const std::vector<Span>& spans, const std::vector<size_t>& mine, KeyLoad* load) {
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
  int live = 0, stale = 0;
  std::optional<Crowd> over, stale_over;  // the periods under way
  auto at_peak = [&] {
    std::vector<size_t> tags;
    for (const auto& [from, i] : alive) tags.push_back(spans[i].tag);
    return tags;
  };
  // Opens, extends or closes the period `cur` as of moment `t`.
  auto track = [&](std::optional<Crowd>& cur, bool crowded, bool by_live, int64_t t,
                   std::vector<Crowd>* into) {
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
      const int d = events[e].start ? 1 : -1;
      (s.stale ? stale : live) += d;
      if (events[e].start) {
        alive.insert({s.from, events[e].span});
      } else {
        alive.erase({s.from, events[e].span});
      }
    }
    // These counts hold from t to the next event.
    if (e < events.size() && live >= load->limit) load->at_limit_ms += events[e].t - t;
    load->peak_live = std::max(load->peak_live, live);
    load->peak = std::max(load->peak, live + stale);
    track(over, live > load->limit, true, t, &load->over);
    track(stale_over, live <= load->limit && live + stale > load->limit, false, t,
          &load->stale_over);
  }
  // Every span ends, so the last moment closed both periods.
}

}  // namespace

std::map<std::string, KeyLoad> CountOverlaps(const std::vector<Span>& spans,
                                             const std::map<std::string, int64_t>& limits) {
  std::map<std::string, KeyLoad> out;
  std::map<std::string, std::vector<size_t>> by_key;
  for (const auto& [key, limit] : limits) out[key].limit = limit;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].to <= spans[i].from || limits.count(spans[i].key) == 0) continue;
    by_key[spans[i].key].push_back(i);
  }
  for (const auto& [key, mine] : by_key) {
    KeyLoad& load = out[key];
    load.spans = static_cast<int>(mine.size());
    Sweep(spans, mine, &load);
  }
  return out;
}

}  // namespace chaos
