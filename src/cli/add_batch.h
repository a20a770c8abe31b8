// `warden add --batch`: the jobs on stdin, one JSON object a line
// (warden/job_json.h has the fields), enqueued only if every line is good.
#pragma once

#include <istream>

#include "cli/cli.h"

namespace warden::cli {

// Reads and checks every job line of `in` (a field a line leaves out takes
// its value from `defaults`: `add --batch`'s flags), then, only if all are
// good, enqueues them in transactions of kMaxBatchJobs, in their order.
// Prints each job's id, a line each (`--json`: one array of {id, created,
// served}); returns the exit status. A bad line is exit 2, "line N: ...",
// with nothing enqueued. `require_worker`: when no active worker runs some
// line's queue and task, exit 1 with nothing enqueued.
int AddBatch(const JobSpec& defaults, const Globals& g, std::istream& in, bool require_worker);

}  // namespace warden::cli
