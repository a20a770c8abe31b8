// SqliteStore: the operator surface: queue pauses, API tokens, the audit log.
#include <string>
#include <vector>

#include "store/sqlite/sqlite_store.h"

namespace warden::sqlite {
namespace {

TokenInfo TokenFromColumns(Stmt& q) {
  TokenInfo t;
  t.id = q.Int(0);
  t.name = q.Text(1);
  t.scope = ParseScope(q.Text(2)).value_or(Scope::kRead);
  t.created_at = q.Int(3);
  if (!q.IsNull(4)) t.revoked_at = q.Int(4);
  if (!q.IsNull(5)) t.last_used_at = q.Int(5);
  if (!q.IsNull(6)) t.expires_at = q.Int(6);
  return t;
}

constexpr const char* kTokenColumns =
    "id, name, scope, created_at, revoked_at, last_used_at, expires_at";

}  // namespace

Status SqliteStore::AuditLocked(const AuditEntry& audit, TimeMs now) {
  WARDEN_ASSIGN_OR_RETURN(
      Stmt ins, db_->Prepare("INSERT INTO audit_log (at, actor, action, target, count) "
                             "VALUES (?, ?, ?, ?, ?)"));
  return ins.Bind(1, now)
      .Bind(2, audit.actor)
      .Bind(3, audit.action)
      .Bind(4, audit.target)
      .Bind(5, audit.count)
      .Exec()
      .status();
}

Result<bool> SqliteStore::QueueSetPaused(const std::string& queue, bool paused,
                                         const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare(paused ? "INSERT INTO queue_pauses (queue, paused_at) VALUES (?1, ?2) "
                                    "ON CONFLICT (queue) DO NOTHING"
                                  : "DELETE FROM queue_pauses WHERE queue = ?1"));
  q.Bind(1, queue);
  if (paused) q.Bind(2, now);
  WARDEN_ASSIGN_OR_RETURN(int changed, q.Exec());
  AuditEntry entry = audit;
  entry.count = changed;
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  if (!paused && changed > 0) NotifyWorkers();
  return changed > 0;
}

Result<std::optional<TimeMs>> SqliteStore::QueuePausedAt(const std::string& queue) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(Stmt q,
                          db_->Prepare("SELECT paused_at FROM queue_pauses WHERE queue = ?"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Bind(1, queue).Step());
  std::optional<TimeMs> at;
  if (row) at = q.Int(0);
  q.Reset();
  return at;
}

Result<std::optional<JobId>> SqliteStore::JobHoldingKey(const std::string& key) {
  MutexLock lock(mu_);
  // jobs_running_ckey holds exactly these rows.
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT id FROM jobs WHERE state = 'running' AND concurrency_key = ? "
                           "AND concurrency_key IS NOT NULL"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Bind(1, key).Step());
  std::optional<JobId> id;
  if (row) id = q.Int(0);
  q.Reset();
  return id;
}

Result<TokenInfo> SqliteStore::TokenInsert(const TokenInfo& t, std::optional<Millis> lifetime,
                                           const std::string& hash, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  std::optional<TimeMs> expires_at;
  if (lifetime) expires_at = now + lifetime->count();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt ins, db_->Prepare("INSERT INTO api_tokens (name, scope, hash, created_at, expires_at) "
                             "VALUES (?, ?, ?, ?, ?)"));
  Status s = ins.Bind(1, t.name).Bind(2, ScopeName(t.scope)).Bind(3, hash).Bind(4, now)
                 .Bind(5, expires_at)
                 .Exec()
                 .status();
  if (s.code() == StatusCode::kFailedPrecondition) {
    return FailedPrecondition("a token named '" + t.name + "' exists (revoke it first)");
  }
  WARDEN_RETURN_IF_ERROR(s);
  TokenInfo out = t;
  out.id = sqlite3_last_insert_rowid(db_->raw());
  out.created_at = now;
  out.expires_at = expires_at;
  WARDEN_RETURN_IF_ERROR(AuditLocked(audit, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return out;
}

Result<TokenFound> SqliteStore::TokenFind(int64_t id) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare(std::string("SELECT ") + kTokenColumns +
                           ", hash FROM api_tokens WHERE id = ? AND revoked_at IS NULL"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
  if (!row) return NotFound("no live token with id " + std::to_string(id));
  TokenFound out{TokenFromColumns(q), q.Text(7), clock_->NowMs()};
  q.Reset();
  return out;
}

Status SqliteStore::TokenTouch(int64_t id, TimeMs at) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("UPDATE api_tokens SET last_used_at = ?1 WHERE id = ?2 AND "
                           "(last_used_at IS NULL OR last_used_at < ?1)"));
  WARDEN_RETURN_IF_ERROR(q.Bind(1, at).Bind(2, id).Exec().status());
  return tx->Commit();
}

Result<std::vector<TokenInfo>> SqliteStore::TokenList() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db_->Prepare(std::string("SELECT ") + kTokenColumns +
                                               " FROM api_tokens ORDER BY id"));
  std::vector<TokenInfo> out;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(TokenFromColumns(q));
  }
  return out;
}

Result<TokenInfo> SqliteStore::TokenRevoke(const std::string& name_or_id,
                                           const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(*db_));
  const TimeMs now = clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare(std::string("UPDATE api_tokens SET revoked_at = ?1 WHERE (name = ?2 "
                                       "OR CAST(id AS TEXT) = ?2) AND revoked_at IS NULL "
                                       "RETURNING ") +
                           kTokenColumns));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Bind(1, now).Bind(2, name_or_id).Step());
  if (!row) return NotFound("no live token named '" + name_or_id + "'");
  const TokenInfo revoked = TokenFromColumns(q);
  q.Reset();
  WARDEN_RETURN_IF_ERROR(AuditLocked(audit, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return revoked;
}

Result<std::vector<AuditEntry>> SqliteStore::AuditList(int limit, int64_t before) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Stmt q, db_->Prepare("SELECT id, at, actor, action, target, count FROM audit_log "
                           "WHERE ?1 = 0 OR id < ?1 ORDER BY id DESC LIMIT ?2"));
  q.Bind(1, before).Bind(2, limit);
  std::vector<AuditEntry> out;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(AuditEntry{q.Int(0), q.Int(1), q.Text(2), q.Text(3), q.Text(4), q.Int(5)});
  }
  return out;
}

}  // namespace warden::sqlite
