// MemoryStore: the operator surface: queue pauses, API tokens, the audit log.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "store/memory/memory_store.h"
#include "store/queue_rows.h"

namespace warden::memory {

Result<bool> MemoryStore::QueueSetPaused(const std::string& queue, bool paused,
                                         const AuditEntry& audit) {
  MutexLock lock(db_->mu);
  const TimeMs now = clock_->NowMs();
  const bool changed = paused ? db_->t.queue_pauses.emplace(queue, now).second
                              : db_->t.queue_pauses.erase(queue) > 0;
  AuditEntry entry = audit;
  entry.count = changed ? 1 : 0;
  AppendAudit(db_->t, std::move(entry), now);
  if (!paused && changed) db_->wake->WakeAll();
  return changed;
}

Result<std::vector<QueueInfo>> MemoryStore::QueueList() {
  MutexLock lock(db_->mu);
  // The kept counts (SQLite's job_counts), in its order, zeros skipped.
  QueueRows queues;
  for (const auto& [key, n] : db_->t.job_counts) {
    if (n == 0) continue;
    std::optional<TimeMs> at;
    auto available = db_->t.available_by_run_at.find(key.first);
    if (key.second == JobStateName(JobState::kAvailable) &&
        available != db_->t.available_by_run_at.end() && !available->second.empty()) {
      at = available->second.begin()->first;
    }
    queues.AddCount(key.first, key.second, n, at);
  }
  for (const auto& [name, at] : db_->t.queue_pauses) queues.AddPause(name, at);
  for (const auto& [name, limits] : db_->t.queue_limits) queues.AddLimits(name, limits);
  return queues.Take();
}

Result<std::optional<TimeMs>> MemoryStore::QueuePausedAt(const std::string& queue) {
  MutexLock lock(db_->mu);
  auto it = db_->t.queue_pauses.find(queue);
  if (it == db_->t.queue_pauses.end()) return std::optional<TimeMs>();
  return std::optional<TimeMs>(it->second);
}

Result<std::optional<JobId>> MemoryStore::JobHoldingKey(const std::string& key) {
  MutexLock lock(db_->mu);
  for (const auto& [id, job] : db_->t.jobs) {
    if (job.state == JobState::kRunning && !key.empty() && job.concurrency_key == key) {
      return std::optional<JobId>(id);
    }
  }
  return std::optional<JobId>();
}

Result<TokenInfo> MemoryStore::TokenInsert(const TokenInfo& t, std::optional<Millis> lifetime,
                                           const std::string& hash, const AuditEntry& audit) {
  MutexLock lock(db_->mu);
  for (const auto& [id, row] : db_->t.tokens) {
    if (row.info.name == t.name && !row.info.revoked_at) {
      return FailedPrecondition("a token named '" + t.name + "' exists (revoke it first)");
    }
  }
  const TimeMs now = clock_->NowMs();
  TokenInfo info = t;
  info.id = ++db_->t.last_token_id;
  info.created_at = now;
  info.revoked_at.reset();
  info.last_used_at.reset();
  info.expires_at.reset();
  if (lifetime) info.expires_at = now + lifetime->count();
  db_->t.tokens[info.id] = TokenRow{info, hash};
  AppendAudit(db_->t, audit, now);
  return info;
}

Result<TokenFound> MemoryStore::TokenFind(int64_t id) {
  MutexLock lock(db_->mu);
  auto it = db_->t.tokens.find(id);
  if (it == db_->t.tokens.end() || it->second.info.revoked_at) {
    return NotFound("no live token with id " + std::to_string(id));
  }
  return TokenFound{it->second.info, it->second.hash, clock_->NowMs()};
}

Status MemoryStore::TokenTouch(int64_t id, TimeMs at) {
  MutexLock lock(db_->mu);
  auto it = db_->t.tokens.find(id);
  if (it == db_->t.tokens.end()) return Status::Ok();
  std::optional<TimeMs>& last = it->second.info.last_used_at;
  if (!last || *last < at) last = at;
  return Status::Ok();
}

Result<std::vector<TokenInfo>> MemoryStore::TokenList() {
  MutexLock lock(db_->mu);
  std::vector<TokenInfo> out;
  for (const auto& [id, row] : db_->t.tokens) out.push_back(row.info);
  return out;
}

Result<TokenInfo> MemoryStore::TokenRevoke(const std::string& name_or_id,
                                           const AuditEntry& audit) {
  MutexLock lock(db_->mu);
  for (auto& [id, row] : db_->t.tokens) {
    if (row.info.revoked_at) continue;
    if (row.info.name != name_or_id && std::to_string(id) != name_or_id) continue;
    const TimeMs now = clock_->NowMs();
    row.info.revoked_at = now;
    AppendAudit(db_->t, audit, now);
    return row.info;
  }
  return NotFound("no live token named '" + name_or_id + "'");
}

Result<std::vector<AuditEntry>> MemoryStore::AuditList(int limit, int64_t before) {
  MutexLock lock(db_->mu);
  std::vector<AuditEntry> out;
  for (auto it = db_->t.audit.rbegin();
       it != db_->t.audit.rend() && static_cast<int>(out.size()) < limit; ++it) {
    if (before == 0 || it->id < before) out.push_back(*it);
  }
  return out;
}

}  // namespace warden::memory
