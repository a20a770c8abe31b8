// How jobs, workers and stats look: as JSON (the contract other tools rely
// on, see docs/cli.md, "CLI reference": `--json` and the JSON documents
// after the command table) and as text tables.
#pragma once

#include <string>
#include <vector>

#include "warden/backlog.h"
#include "warden/duration.h"  // HumanDuration
#include "warden/json_view.h"
#include "warden/warden.h"

namespace warden::cli {

// Tables fit each name column to its longest name, up to a cap; a longer
// name is cut (by display width, never inside a character) and ends with
// "…". `wide` lifts the caps: every name is shown whole.
// `total`: how many jobs matched (a footer says when only some are shown).
// Times are shown relative to `now` (this host's clock).
// `live_workers` (Client::ListWorkers(true)): a running job's silent worker
// is shown as silent.
void PrintJobTable(const std::vector<JobInfo>& jobs, int64_t total, TimeMs now, bool wide,
                   const std::vector<WorkerInfo>& live_workers = {});
void PrintJobDetail(const JobInfo& j, TimeMs now,
                    const std::vector<WorkerInfo>& live_workers = {});

// `t` seen from `now`, to the second: "3s ago", "in 1h30m", "now".
std::string HumanWhen(TimeMs t, TimeMs now);
void PrintWorkerTable(const std::vector<WorkerInfo>& workers, bool wide);
// This host's clock, for times shown relative to now.
TimeMs NowMs();
// `unserved`: Client::Unserved(); nothing is printed for none.
void PrintStats(const Stats& s, const std::vector<BacklogGroup>& unserved, TimeMs now);
// "waiting for a worker (no active worker runs them): 2 jobs on queue q2
// of task other", or nothing; on `out`.
void PrintUnserved(std::FILE* out, const std::vector<BacklogGroup>& unserved, TimeMs now);

}  // namespace warden::cli
