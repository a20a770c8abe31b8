// Overlap counting: how many executions were alive at once, per key,
// against a limit per key. The chaos checker's capacity invariants are
// this one count with a different key: flow control's concurrency limit
// (key: the job's queue; invariant 7) and node capacity (key: the node of
// the run's worker; 8). Pure: no I/O, nothing of warden's, so its unit
// test (overlap_test.cc) compiles in a moment.
//
// A span is one execution's [from, to) in ms: touching spans ([0, 10) and
// [10, 20)) are never alive at once. A span is `stale` when the store had
// already taken it back (its attempt ended) and the checker excused its
// activity (a frozen or dead worker's run, invariant 6): stale spans are
// counted, but apart.
//
// A limit may change while spans run (a node resized). Lowering it stops
// nothing: what runs may go on over the new limit, but nothing may be
// admitted while that many run. A span is admitted at its `judged_at` (the
// claim, which comes before the run), and every live span alive at a
// moment was already open when the latest of them was admitted: that
// admission counted them all. So at each moment the live spans are held to
// the limit in force at the latest admission among them; more is a
// violation, which lasts until they are back within it. (Judging a span by
// its own admission alone is wrong: one admitted under 8 whose run starts
// after a raise to 12 admitted others would be held to 8 with them.) One
// over it only with stale spans counted is a stale overlap, reported on its
// own, never hidden. With a limit that never changes, that is every moment
// over the limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace chaos {

struct Span {
  std::string key;  // what the limit is per: a queue, a node
  int64_t from = 0;
  int64_t to = 0;  // exclusive; a span with to <= from is left out
  bool stale = false;
  size_t tag = 0;  // the caller's, to name the span in evidence
  std::optional<int64_t> judged_at;  // the limit of this moment admits it; unset: `from`
};

// A change of a key's limit. When it took effect is known only to lie in
// [from, to] (the command was sent at `from`, its answer came at `to`):
// in between, the larger of the limits before and after it holds.
struct LimitChange {
  int64_t from = 0, to = 0;
  int64_t limit = 0;
};

// A key's limit over time: `initial`, then each change, in time order.
struct Limit {
  Limit(int64_t initial = 0) : initial(initial) {}  // NOLINT: a plain limit
  int64_t initial = 0;
  std::vector<LimitChange> changes;
  int64_t At(int64_t t) const;
};

// A period in which too many spans were alive: [from, to).
struct Crowd {
  int64_t from = 0, to = 0;
  int peak = 0;       // most spans alive at once in it, stale ones counted
  int peak_live = 0;  // of them, live
  int64_t peak_at = 0;
  int64_t limit = 0;  // the limit in force at the latest admission when it opened
  std::vector<size_t> at_peak;  // the tags of the spans alive then, by `from`
};

struct KeyLoad {
  int64_t limit = 0;  // the initial one
  int spans = 0;
  int peak_live = 0;  // most live spans alive at once
  int peak = 0;       // most spans alive at once, stale ones counted
  // How long the live spans were at (or past) the limit in force: whether
  // it was reached, and not only respected, by the workload.
  int64_t at_limit_ms = 0;
  std::vector<Crowd> over;        // more live spans than the limit: violations
  std::vector<Crowd> stale_over;  // over the limit only with stale spans counted
};

// Every key in `limits` gets an entry; spans of a key without a limit are
// left out.
std::map<std::string, KeyLoad> CountOverlaps(const std::vector<Span>& spans,
                                             const std::map<std::string, Limit>& limits);

}  // namespace chaos
