// Overlap counting: how many executions were alive at once, per key,
// against a limit per key. The chaos checker's capacity invariants are
// this one count with a different key: flow control's concurrency limit
// (key: the job's queue; invariant 7) and, later, node capacity (key: the
// node of the run's worker). Pure: no I/O, nothing of warden's, so its unit
// test (overlap_test.cc) compiles in a moment.
//
// A span is one execution's [from, to) in ms: touching spans ([0, 10) and
// [10, 20)) are never alive at once. A span is `stale` when the store had
// already taken it back (its attempt ended) and the checker excused its
// activity (a frozen or dead worker's run, invariant 6): stale spans are
// counted, but apart. A moment with more than the limit of live spans is a
// violation; one over the limit only with stale spans counted is a stale
// overlap, reported on its own, never hidden.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace chaos {

struct Span {
  std::string key;  // what the limit is per: a queue, a node
  int64_t from = 0;
  int64_t to = 0;  // exclusive; a span with to <= from is left out
  bool stale = false;
  size_t tag = 0;  // the caller's, to name the span in evidence
};

// A period in which too many spans were alive: [from, to).
struct Crowd {
  int64_t from = 0, to = 0;
  int peak = 0;       // most spans alive at once in it, stale ones counted
  int peak_live = 0;  // of them, live
  int64_t peak_at = 0;
  std::vector<size_t> at_peak;  // the tags of the spans alive then, by `from`
};

struct KeyLoad {
  int64_t limit = 0;
  int spans = 0;
  int peak_live = 0;  // most live spans alive at once
  int peak = 0;       // most spans alive at once, stale ones counted
  // How long the live spans were at (or past) the limit: whether it was
  // reached, and not only respected, by the workload.
  int64_t at_limit_ms = 0;
  std::vector<Crowd> over;        // more live spans than the limit: violations
  std::vector<Crowd> stale_over;  // over the limit only with stale spans counted
};

// Every key in `limits` gets an entry; spans of a key without a limit are
// left out.
std::map<std::string, KeyLoad> CountOverlaps(
    const std::vector<Span>& spans, const std::map<std::string, int64_t>& limits);

}  // namespace chaos
