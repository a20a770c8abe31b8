// What the operator surface (`warden serve`, the CLI's admin commands)
// reads and writes beside jobs and workers: queues and their pause, API
// tokens, and the audit log of operator actions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "warden/job.h"

namespace warden {

// A queue as an operator sees it: every queue that has a job, or is paused.
struct QueueInfo {
  std::string name;
  bool paused = false;
  std::optional<TimeMs> paused_at;
  // Jobs by state (JobStateName), every state with at least one job.
  std::vector<std::pair<std::string, int64_t>> jobs;
  // The run_at of the available job that has waited longest (none: no
  // available job). Its age is the store's now minus this.
  std::optional<TimeMs> oldest_available_at;
  // Active workers whose queue list names this queue or is empty (all).
  int live_workers = 0;
  int64_t CountIn(JobState state) const;
};

// What a token may do. Each scope includes the ones before it: read <
// enqueue < operate < admin. (A worker scope, for workers speaking HTTP,
// will sit beside enqueue.)
enum class Scope { kRead = 0, kEnqueue = 1, kOperate = 2, kAdmin = 3 };
const char* ScopeName(Scope s);
std::optional<Scope> ParseScope(const std::string& s);

struct TokenInfo {
  int64_t id = 0;
  std::string name;
  Scope scope = Scope::kRead;
  TimeMs created_at = 0;
  std::optional<TimeMs> revoked_at;
};

// A token as created: `secret` is shown once and stored only hashed.
struct NewToken {
  TokenInfo info;
  std::string secret;
};

// One operator action, as the audit log keeps it.
struct AuditEntry {
  int64_t id = 0;
  TimeMs at = 0;
  std::string actor;   // "token:NAME" or "cli:USER"
  std::string action;  // e.g. "queue.pause", "job.retry", "token.create"
  std::string target;  // what it acted on: a queue, a job id, a filter (JSON)
  int64_t count = 0;   // how many things it changed
};

}  // namespace warden
