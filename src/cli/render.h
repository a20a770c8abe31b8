// How jobs, workers and stats look: as JSON (the contract other tools rely
// on, see README "JSON output") and as text tables.
#pragma once

#include <string>
#include <vector>

#include "warden/warden.h"

namespace warden::cli {

Json JobToJson(const JobInfo& j, bool with_attempts);
Json WorkerToJson(const WorkerInfo& w);
Json StatsToJson(const Stats& s);

// Tables fit each name column to its longest name, up to a cap; a longer
// name is cut (by display width, never inside a character) and ends with
// "…". `wide` lifts the caps: every name is shown whole.
// `total`: how many jobs matched (a footer says when only some are shown).
// Times are shown relative to `now` (this host's clock).
void PrintJobTable(const std::vector<JobInfo>& jobs, int64_t total, TimeMs now, bool wide);
void PrintJobDetail(const JobInfo& j, TimeMs now);

// For people: "850ms", "4.2s", "42s", "3m5s", "1h30m", "2d4h" (cut, not
// rounded, past a minute).
std::string HumanDuration(Millis d);
// `t` seen from `now`, to the second: "3s ago", "in 1h30m", "now".
std::string HumanWhen(TimeMs t, TimeMs now);
void PrintWorkerTable(const std::vector<WorkerInfo>& workers, bool wide);
void PrintStats(const Stats& s);

}  // namespace warden::cli
