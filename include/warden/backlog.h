// Unfinished jobs grouped by what decides which workers can run them, and
// the rule a claim applies: for telling the jobs no live worker can run
// (`warden add` warns, `warden stats` lists them) and for a worker's
// --exit-when-idle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "warden/job.h"

namespace warden {

struct BacklogGroup {
  std::string queue;
  std::string task;
  bool command = false;  // added with --cmd: only --allow-cmd workers run it
  JobState state = JobState::kAvailable;  // scheduled, available, retryable or running
  int64_t count = 0;
  // The soonest run_at among them, for scheduled, retryable and running
  // groups; 0 for available ones, which are due. (No reader needs it there,
  // and finding it could read every job of a queue whose other tasks come
  // first in its claim index.)
  TimeMs next_run_at = 0;
};

// What one worker runs, as its claims select jobs.
struct Serving {
  std::vector<std::string> queues;  // empty: every queue
  std::vector<std::string> tasks;   // it has a handler or a --task for
  bool allow_commands = false;
};

bool CanRun(const Serving& s, const std::string& queue, const std::string& task, bool command);
Serving ServingOf(const WorkerInfo& w);
// The waiting groups (not running ones) that none of `workers` can run.
std::vector<BacklogGroup> Unserved(const std::vector<BacklogGroup>& backlog,
                                   const std::vector<Serving>& workers);
// For a person: "2 jobs on queue reports, 1 job of task resize" and so on,
// naming at most a few groups.
std::string DescribeGroups(const std::vector<BacklogGroup>& groups, TimeMs now);
// "start one with: warden worker --queues mail --task email=COMMAND": the
// worker that would run a job like `spec`. NoWorkerRuns: the whole sentence
// `warden add` and POST /v1/jobs say when none runs it.
std::string WhoWouldRun(const JobSpec& spec);
std::string NoWorkerRuns(const JobSpec& spec);

}  // namespace warden
