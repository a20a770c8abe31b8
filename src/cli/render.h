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

void PrintJobTable(const std::vector<JobInfo>& jobs);
void PrintJobDetail(const JobInfo& j);
void PrintWorkerTable(const std::vector<WorkerInfo>& workers);
void PrintStats(const Stats& s);

}  // namespace warden::cli
