// A job's recovery timeline: each attempt's claim (by which worker
// incarnation, under which lease token), how it ended, how a loss was found
// (proven death, lease expiry, an operator's release, a shutdown), when the
// job could run again, and every late write that fencing refused. `warden
// jobs timeline ID`, GET /v1/jobs/{id}/timeline, the dashboard's job page.
// Also each time the job ended (dead, with why: its attempts ran out, a
// crash loop, no retry; expired; cancelled), a retry having cleared the
// end from its row, and every operator's retry, run-now, cancel and release
// of its worker (Store::JobActions: who, which bulk operation, fresh or not).
// Pure: the caller reads the facts (Client::JobTimeline).
#pragma once

#include <string>
#include <vector>

#include "warden/job.h"

namespace warden {

struct TimelineEvent {
  TimeMs at = 0;
  // Stable kinds: enqueued, claimed, start_marked, succeeded, failed, lost,
  // runnable, fenced_write, finished (the job ended; evidence "reason":
  // attempts_exhausted, crash_loop, not_retried, start_deadline, cancelled),
  // operator (evidence "action": retry, run_now, cancel, release).
  std::string kind;
  int attempt = 0;    // the attempt it is about; 0: the job itself
  std::string text;   // for a person, one line
  Json evidence;      // the facts behind it (ids, names, tokens, causes)
};

struct JobTimeline {
  JobInfo job;                          // with its attempts
  std::vector<FencedWriteInfo> fenced;  // oldest first
  std::vector<TimelineEvent> events;    // by time; ties in the order they happened
};

// `workers`: any workers known (the attempts' workers among them give each
// claim its incarnation: node, pid, start); a pruned one is named by id.
JobTimeline BuildTimeline(JobInfo job, std::vector<FencedWriteInfo> fenced,
                          const std::vector<WorkerInfo>& workers,
                          const std::vector<JobActionInfo>& actions = {});

}  // namespace warden
