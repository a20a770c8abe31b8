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
void PrintJobTable(const std::vector<JobInfo>& jobs, bool wide);
void PrintJobDetail(const JobInfo& j);
void PrintWorkerTable(const std::vector<WorkerInfo>& workers, bool wide);
void PrintStats(const Stats& s);

}  // namespace warden::cli
