// The request bodies of POST /v1/jobs/bulk and POST /v1/queues/{q}/pause,
// read strictly from their parsed JSON: an unknown member or a wrong type
// is kInvalidArgument naming it, never ignored. Pure: no I/O (fuzz target
// `job_filter`).
#pragma once

#include "warden/bulk.h"
#include "warden/job.h"

namespace warden::server {

// {"action", "filter", "dry_run", "all", "fresh"}. A filter that sets
// nothing is every job the action applies to, and needs "all": true, as
// `warden jobs ACTION` needs --all: a forgotten filter once deleted every
// job. "fresh" (a retry's only) drops each job's checkpoint.
struct BulkBody {
  BulkAction action = BulkAction::kRetry;
  JobFilter filter;
  bool dry_run = false;
  bool all = false;
  bool fresh = false;
};
Result<BulkBody> BulkBodyIn(const Json& body);
// Whether a filter sets any condition.
bool FilterSetsNothing(const JobFilter& f);

// POST /v1/jobs/{id}/retry: none, or {"fresh": true|false} (drop the
// checkpoint). `body` null: there was none.
Result<RetryOptions> RetryBodyIn(const Json& body);

// POST /v1/queues/{q}/pause: none, or {"create": true|false} (pause a
// queue nothing names yet). `body` null: there was none.
Result<bool> PauseCreateIn(const Json& body);

}  // namespace warden::server
