// warden's objects as JSON: the one contract of `--json` output and of the
// HTTP API (docs/cli.md, docs/http-api.md). Times are RFC 3339 UTC text;
// absent values are null, and a key, once there, is always there.
#pragma once

#include <vector>

#include "warden/backlog.h"
#include "warden/job.h"
#include "warden/nodes.h"
#include "warden/operator.h"
#include "warden/timeline.h"
#include "warden/why.h"
#include "warden/worker.h"

namespace warden {

Json JobToJson(const JobInfo& j, bool with_attempts);
Json WorkerToJson(const WorkerInfo& w);
Json StatsToJson(const Stats& s);
Json UnservedToJson(const std::vector<BacklogGroup>& unserved);
// `now`: the store's clock, for the oldest available job's age.
Json QueueToJson(const QueueInfo& q, TimeMs now);
// {"concurrency": N or null, "rate": "N/INTERVAL" (FormatRate) or null}
Json LimitsToJson(const QueueLimits& l);
Json TokenToJson(const TokenInfo& t);
// {"name", "registered", "present", "enabled", "takes_work", "capacity"
// (null: none), "running", "live_workers", "updated_at", "removed_at"}
Json NodeToJson(const NodeInfo& n);
// {"added", "revived", "removed", "resized", "disabled": [names],
// "unchanged": N}
Json NodeSyncToJson(const NodeSyncReport& r);
// A sync's answer (`warden nodes sync --json`, POST /v1/nodes/sync):
// NodeSyncToJson and "dry_run", "workers_released", "jobs_recovered".
Json NodeSyncResultToJson(const NodeSyncReport& r, bool dry_run, int workers_released,
                          int64_t jobs_recovered);
Json AuditToJson(const AuditEntry& e);
// {"id", "state", "reasons": [{"code", "message", "evidence"}, ...]}
Json WhyToJson(const JobInfo& job, const std::vector<WhyReason>& reasons);
// {"id", "state", "attempts": [...], "fenced_writes": [...], "events":
// [{"at", "kind", "attempt", "text", "evidence"}, ...]}
Json TimelineToJson(const JobTimeline& t);

}  // namespace warden
