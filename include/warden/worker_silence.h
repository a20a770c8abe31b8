// A silent worker, as every surface shows it: one whose heartbeat has gone
// unrenewed for longer than its keepalive threshold, by the store's clock.
//
// This is a display, not a verdict. Verdicts (a worker marked dead, its
// jobs recovered) come only from watching rows stay unchanged on a
// monotonic clock (core/silence.h, docs/design.md "Presumed death"). A
// display may compare two readings of one clock, the store's: a heartbeat
// is stamped with the store's clock (PostgreSQL: the server's now(); SQLite
// and memory: the clock of the one host that opens the file), and `now`
// here is that same clock read by Store::Now. A step of that clock can
// make a live worker look silent for a moment, or a silent one look live,
// and nothing more: no recovery follows from it.
//
// Pure (src/core/worker_silence.cc); thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "warden/job.h"

namespace warden {

// How long the heartbeat stamped at `last_heartbeat` has gone unrenewed at
// `store_now`, if that is longer than `keepalive`; nullopt otherwise.
std::optional<Millis> WorkerSilentFor(TimeMs last_heartbeat, Millis keepalive,
                                      TimeMs store_now);

// Sets WorkerInfo::silent_for on each live (active or draining) worker from
// WorkerSilentFor, and clears it on the others.
void MarkSilentWorkers(std::vector<WorkerInfo>& workers, TimeMs store_now);

// "no heartbeat for 51s, keepalive 10s"; empty when not silent.
std::string SilenceText(const WorkerInfo& w);

}  // namespace warden
