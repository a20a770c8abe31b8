// What the operator surface (`warden serve`, the CLI's admin commands)
// reads and writes beside jobs and workers: queues and their pause, API
// tokens, and the audit log of operator actions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "warden/job.h"

namespace warden {

// Flow control (warden/flow.h): a queue's fleet-wide limits, enforced in
// the claim on every backend.
struct RateLimit {
  int64_t count = 0;  // at most this many claims...
  Millis per{0};      // ...in any window of this length
  bool operator==(const RateLimit&) const = default;
};
struct QueueLimits {
  // At most this many of the queue's jobs running (claimed, whether their
  // handler has started or they wait in a worker for a slot) at once.
  std::optional<int64_t> concurrency;
  std::optional<RateLimit> rate;
  bool empty() const { return !concurrency && !rate; }
  bool operator==(const QueueLimits&) const = default;
};

// A limited queue's limits and what holds them at one moment (`jobs why`).
struct QueueFlow {
  QueueLimits limits;
  int64_t running = 0;  // its running jobs
  // Some of them (at most kFlowHoldersShown), claimed first first: job, worker.
  std::vector<std::pair<JobId, WorkerId>> holders;
  // Claims within the rate window that ends now, (now - per, now].
  int64_t recent_starts = 0;
  // The window holds `count` claims or more: when it next allows one.
  std::optional<TimeMs> next_start_at;
};
inline constexpr int kFlowHoldersShown = 20;

// A queue as an operator sees it: every queue that has a job, is paused,
// or has a limit.
struct QueueInfo {
  std::string name;
  bool paused = false;
  std::optional<TimeMs> paused_at;
  QueueLimits limits;
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
  // When a request last presented it, to within a minute (a server writes
  // it at most once a minute per token); nullopt: never.
  std::optional<TimeMs> last_used_at;
  // From then on it is refused as expired; nullopt: it does not expire.
  std::optional<TimeMs> expires_at;
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
