// Flow control: per-queue, fleet-wide limits, enforced in the claim on
// every backend (docs/cli.md, *warden queues limit*).
//
// - concurrency N: at most N of the queue's jobs are `running` at once
//   across all workers. A job is running from its claim until its outcome
//   is committed, so a job a worker has claimed but not started yet counts,
//   and jobs of a limited queue are never claimed ahead of a free slot (a
//   job waiting in one worker's buffer would hold a place another worker
//   could use). Lowering the limit stops nothing: the running jobs finish.
// - rate N/INTERVAL: a sliding window. In every window of length INTERVAL,
//   (t - INTERVAL, t] by the store's clock, at most N of the queue's jobs
//   are claimed. A claim that would make it N+1 takes fewer or none; the
//   next is allowed once the oldest claim of the window is INTERVAL old.
//   Claims are the moments the store records (the attempt's claimed_at);
//   a job's handler starts right after (limited jobs are never claimed
//   ahead). Every claim counts, whatever became of the job.
//
// A limit holds for claims that begin after it is set; the store's clock
// judges the window, so it is exact as long as that clock does not step
// back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "warden/operator.h"
#include "warden/status.h"

namespace warden {

// The largest concurrency or rate count accepted: larger is a typo.
inline constexpr int64_t kMaxFlowLimit = 1'000'000;

// "N/INTERVAL": N a decimal count from 1 to kMaxFlowLimit, INTERVAL a
// duration (ParseDuration: 1s, 500ms, 1m30s) from 1ms, or a unit alone
// meaning one of it ("100/m" = "100/1m"). Nothing else: no spaces, no sign.
// Errors are one InvalidArgument line quoting at most 40 bytes of `text`.
Result<RateLimit> ParseRate(std::string_view text);
// "N/" + FormatDuration(per): ParseRate reads it back to the same limit.
std::string FormatRate(const RateLimit& rate);
// A concurrency limit from a flag or a request: 1 to kMaxFlowLimit.
Status CheckConcurrencyLimit(int64_t n);
// The same as text: decimal digits only (no sign, no spaces), leading
// zeros ignored. Errors as ParseRate's.
Result<int64_t> ParseConcurrencyLimit(std::string_view text);
// For people: "concurrency 5, rate 10/1s", or "none".
std::string DescribeLimits(const QueueLimits& limits);

}  // namespace warden
