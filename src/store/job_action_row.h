// A JobActionInfo row (Store::JobActions) as the SQL stores write and read
// it: who did it, and the job's columns as the action found them, copied by
// one INSERT ... SELECT from the job row before the action changes it.
//
// Thread safety: constants and a pure function.
#pragma once

#include <cstdint>
#include <string>

#include "warden/job.h"

namespace warden {

// Who asked for an action on a job, and how.
struct ActionOrigin {
  std::string actor;
  int64_t op = 0;  // the bulk operation; 0: none
  bool fresh = false;
};

// The columns JobActions reads, in JobActionInfo's order.
inline constexpr const char* kJobActionColumns =
    "at, action, actor, op_id, fresh, from_state, finished_at, last_error, charged, "
    "max_attempts, crashes, max_crashes";

// The job's own columns an action row copies, after (job_id, at, action,
// actor, op_id, fresh).
inline constexpr const char* kJobActionCopied =
    "state, finished_at, last_error, charged, max_attempts, crashes, max_crashes";

}  // namespace warden
