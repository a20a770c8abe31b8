// Client: the operator surface (queues, tokens, the audit log).
#include <algorithm>

#include "client/token.h"
#include "client/workers_shown.h"
#include "store/store.h"
#include "warden/client.h"
#include "warden/did_you_mean.h"
#include "warden/duration.h"
#include "warden/flow.h"
#include "warden/text.h"

namespace warden {
namespace {

// How fresh a token's last_used_at is kept, and so the shortest expiry.
constexpr Millis kTokenUseResolution{60'000};

}  // namespace

Result<bool> Client::PauseQueue(const std::string& queue, bool create) {
  WARDEN_RETURN_IF_ERROR(ValidateQueueName(queue));
  if (!create) {
    WARDEN_ASSIGN_OR_RETURN(std::vector<QueueInfo> queues, store_->QueueList());
    WARDEN_ASSIGN_OR_RETURN(ShownWorkers shown, ReadShownWorkers(*store_, /*live_only=*/true));
    std::vector<std::string> known;
    for (const QueueInfo& q : queues) known.push_back(q.name);
    for (const WorkerInfo& w : shown.workers)
      known.insert(known.end(), w.queues.begin(), w.queues.end());
    if (std::find(known.begin(), known.end(), queue) == known.end()) {
      const std::string close = Closest(queue, known);
      return NotFound("no queue '" + OneLine(queue, 60) +
                      "': no job, pause, limit or live worker names it" +
                      (close.empty() ? "" : " (did you mean '" + OneLine(close, 60) + "'?)"));
    }
  }
  return store_->QueueSetPaused(queue, true, AuditEntry{0, 0, actor_, "queue.pause", queue, 0});
}

Result<bool> Client::ResumeQueue(const std::string& queue) {
  WARDEN_RETURN_IF_ERROR(ValidateQueueName(queue));
  return store_->QueueSetPaused(queue, false,
                                AuditEntry{0, 0, actor_, "queue.resume", queue, 0});
}

Result<std::optional<TimeMs>> Client::QueuePausedSince(const std::string& queue) {
  return store_->QueuePausedAt(queue);
}

Result<std::vector<QueueInfo>> Client::ListQueues() {
  WARDEN_ASSIGN_OR_RETURN(std::vector<QueueInfo> queues, store_->QueueList());
  WARDEN_ASSIGN_OR_RETURN(ShownWorkers shown, ReadShownWorkers(*store_, /*live_only=*/true));
  const std::vector<WorkerInfo>& live = shown.workers;
  for (QueueInfo& q : queues) {
    // Live: claiming now (not silent, its node takes work).
    q.live_workers = static_cast<int>(std::count_if(live.begin(), live.end(), [&](const auto& w) {
      return w.Claiming() &&
             (w.queues.empty() ||
              std::find(w.queues.begin(), w.queues.end(), q.name) != w.queues.end());
    }));
  }
  return queues;
}

Result<bool> Client::SetQueueLimits(const std::string& queue, const QueueLimits& limits) {
  WARDEN_RETURN_IF_ERROR(ValidateQueueName(queue));
  if (limits.concurrency) {
    WARDEN_RETURN_IF_ERROR(CheckConcurrencyLimit(*limits.concurrency));
  }
  if (limits.rate) {
    const RateLimit& r = *limits.rate;
    if (r.count < 1 || r.count > kMaxFlowLimit || r.per < Millis(1) || r.per > kMaxDuration) {
      return InvalidArgument("a rate limit must be 1 to " + std::to_string(kMaxFlowLimit) +
                             " per 1ms to 365d");
    }
  }
  return store_->QueueSetLimits(
      queue, limits,
      AuditEntry{0, 0, actor_, "queue.limit", queue + " (" + DescribeLimits(limits) + ")", 0});
}

Result<std::optional<QueueFlow>> Client::GetQueueFlow(const std::string& queue) {
  return store_->QueueFlowOf(queue);
}

Result<NewToken> Client::CreateToken(const std::string& name, Scope scope,
                                     std::optional<Millis> expires_in) {
  WARDEN_RETURN_IF_ERROR(ValidateName("token name", name));
  if (name.find_first_not_of("0123456789") == std::string::npos) {
    return InvalidArgument("token name '" + name +
                           "' is all digits: a revoke could not tell it from an id");
  }
  // Its last use is kept to the minute: a shorter life would end unseen.
  if (expires_in && *expires_in < kTokenUseResolution) {
    return InvalidArgument("a token's expiry must be at least 1m away, not " +
                           FormatDuration(*expires_in));
  }
  WARDEN_ASSIGN_OR_RETURN(std::string secret, token::NewSecret());
  TokenInfo info;
  info.name = name;
  info.scope = scope;
  WARDEN_ASSIGN_OR_RETURN(
      info, store_->TokenInsert(info, expires_in, token::Hash(secret),
                                AuditEntry{0, 0, actor_, "token.create",
                                           name + " (" + ScopeName(scope) + ")", 1}));
  return NewToken{info, token::Format(info.id, secret)};
}

Result<std::vector<TokenInfo>> Client::ListTokens() { return store_->TokenList(); }

Result<TokenInfo> Client::RevokeToken(const std::string& name_or_id) {
  return store_->TokenRevoke(name_or_id,
                             AuditEntry{0, 0, actor_, "token.revoke", name_or_id, 1});
}

Result<TokenInfo> Client::Authenticate(const std::string& secret) {
  const Status refused = NotFound("the token is not a live token");
  const std::optional<token::Parsed> parsed = token::Parse(secret);
  if (!parsed) return refused;
  auto found = store_->TokenFind(parsed->id);
  if (!found.has_value()) {
    if (found.error().code() == StatusCode::kNotFound) return refused;
    return found.error();
  }
  if (!token::SameHash(token::Hash(parsed->secret), found->hash)) return refused;
  TokenInfo& t = found->info;
  // Only the holder of the secret learns that it expired (and its name).
  if (t.expires_at && found->now >= *t.expires_at) {
    return NotFound("the token " + OneLine(t.name, 60) + " expired at " +
                    FormatTime(*t.expires_at) +
                    ": an admin makes a new one with warden tokens create");
  }
  // One write a minute per token at most, however many requests: the
  // listing's "last used" needs no more, and a busy token costs no write
  // per request. A failed write refuses nothing: the request is the
  // caller's, the note is ours.
  if (!t.last_used_at || found->now - *t.last_used_at >= kTokenUseResolution.count()) {
    if (store_->TokenTouch(t.id, found->now).ok()) t.last_used_at = found->now;
  }
  return t;
}

Result<std::vector<WhyReason>> Client::WhyNotRunning(JobId id) {
  WhyFacts facts;
  WARDEN_ASSIGN_OR_RETURN(facts.job, store_->JobGet(id));
  WARDEN_ASSIGN_OR_RETURN(facts.now, store_->Now());
  WARDEN_ASSIGN_OR_RETURN(facts.queue_paused_at, store_->QueuePausedAt(facts.job.queue));
  WARDEN_ASSIGN_OR_RETURN(facts.queue_flow, store_->QueueFlowOf(facts.job.queue));
  if (!facts.job.concurrency_key.empty()) {
    WARDEN_ASSIGN_OR_RETURN(facts.key_holder, store_->JobHoldingKey(facts.job.concurrency_key));
    if (facts.key_holder == id) facts.key_holder.reset();
  }
  WARDEN_ASSIGN_OR_RETURN(ShownWorkers shown, ReadShownWorkers(*store_, /*live_only=*/true));
  facts.live_workers = std::move(shown.workers);
  facts.nodes = std::move(shown.nodes);
  return warden::WhyNotRunning(facts);
}

Result<JobTimeline> Client::Timeline(JobId id) {
  WARDEN_ASSIGN_OR_RETURN(JobInfo job, store_->JobGet(id));
  WARDEN_ASSIGN_OR_RETURN(std::vector<FencedWriteInfo> fenced, store_->JobFencedWrites(id));
  WARDEN_ASSIGN_OR_RETURN(std::vector<JobActionInfo> actions, store_->JobActions(id));
  WARDEN_ASSIGN_OR_RETURN(std::vector<WorkerInfo> workers, store_->WorkerList(false));
  return BuildTimeline(std::move(job), std::move(fenced), workers, actions);
}

Result<std::vector<AuditEntry>> Client::ListAudit(int limit, int64_t before) {
  if (limit < 1) return InvalidArgument("limit must be at least 1");
  return store_->AuditList(limit, before);
}

Result<std::map<std::string, double>> Client::MetricTotals() { return store_->MetricTotals(); }

}  // namespace warden
