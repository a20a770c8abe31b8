// PgStore: the operator surface: queue pauses, API tokens, the audit log.
#include <map>
#include <string>
#include <vector>

#include "store/postgres/pg_store.h"

namespace warden::pg {
namespace {

constexpr const char* kTokenColumns =
    "id, name, scope, created_at, revoked_at, last_used_at, expires_at";

TokenInfo TokenFromRow(const Rows& r, int i) {
  TokenInfo t;
  t.id = r.Int(i, 0);
  t.name = r.Text(i, 1);
  t.scope = ParseScope(r.Text(i, 2)).value_or(Scope::kRead);
  t.created_at = r.Int(i, 3);
  t.revoked_at = r.OptInt(i, 4);
  t.last_used_at = r.OptInt(i, 5);
  t.expires_at = r.OptInt(i, 6);
  return t;
}

}  // namespace

Status PgStore::AuditLocked(const AuditEntry& audit, TimeMs now) {
  return conn_
      ->Exec("INSERT INTO warden.audit_log (at, actor, action, target, count) VALUES "
             "($1::bigint, $2, $3, $4, $5::bigint)",
             Params().Add(now).Add(audit.actor).Add(audit.action).Add(audit.target).Add(
                 audit.count))
      .status();
}

Result<bool> PgStore::QueueSetPaused(const std::string& queue, bool paused,
                                     const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, paused ? conn_->Exec("INSERT INTO warden.queue_pauses (queue, paused_at) VALUES "
                                   "($1, $2::bigint) ON CONFLICT (queue) DO NOTHING RETURNING 1",
                                   Params().Add(queue).Add(now))
                     : conn_->Exec("DELETE FROM warden.queue_pauses WHERE queue = $1 RETURNING 1",
                                   Params().Add(queue)));
  AuditEntry entry = audit;
  entry.count = r.size();
  WARDEN_RETURN_IF_ERROR(AuditLocked(entry, now));
  if (!paused && !r.empty()) {
    // Sent at the commit: idle workers claim the queue's jobs at once.
    WARDEN_RETURN_IF_ERROR(conn_->Exec("SELECT pg_notify('warden_jobs', '')").status());
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return !r.empty();
}

Result<std::optional<TimeMs>> PgStore::QueuePausedAt(const std::string& queue) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("SELECT paused_at FROM warden.queue_pauses WHERE queue = $1",
                          Params().Add(queue)));
  if (r.empty()) return std::optional<TimeMs>();
  return std::optional<TimeMs>(r.Int(0, 0));
}

Result<std::optional<JobId>> PgStore::JobHoldingKey(const std::string& key) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("SELECT id FROM warden.jobs WHERE state = 'running' AND "
                          "concurrency_key = $1",
                          Params().Add(key)));
  if (r.empty()) return std::optional<JobId>();
  return std::optional<JobId>(r.Int(0, 0));
}

Result<TokenInfo> PgStore::TokenInsert(const TokenInfo& t, std::optional<Millis> lifetime,
                                       const std::string& hash, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  std::optional<int64_t> expires_at;
  if (lifetime) expires_at = now + lifetime->count();
  Result<Rows> r = conn_->Exec(
      "INSERT INTO warden.api_tokens (name, scope, hash, created_at, expires_at) VALUES ($1, "
      "$2, $3, $4::bigint, $5::bigint) RETURNING id",
      Params().Add(t.name).Add(ScopeName(t.scope)).Add(hash).Add(now).Add(expires_at));
  if (!r.has_value() && r.error().code() == StatusCode::kFailedPrecondition) {
    return FailedPrecondition("a token named '" + t.name + "' exists (revoke it first)");
  }
  WARDEN_RETURN_IF_ERROR(r.status());
  TokenInfo out = t;
  out.id = r->Int(0, 0);
  out.created_at = now;
  out.expires_at = expires_at;
  WARDEN_RETURN_IF_ERROR(AuditLocked(audit, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return out;
}

Result<TokenFound> PgStore::TokenFind(int64_t id) {
  MutexLock lock(mu_);
  // The server's time in the same round trip: one per request.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec(std::string("SELECT ") + kTokenColumns +
                              ", hash, coalesce($2::bigint, warden.now_ms()) FROM "
                              "warden.api_tokens WHERE id = $1::bigint AND revoked_at IS NULL",
                          Params().Add(id).Add(FakeNow())));
  if (r.empty()) return NotFound("no live token with id " + std::to_string(id));
  return TokenFound{TokenFromRow(r, 0), r.Text(0, 7), r.Int(0, 8)};
}

Status PgStore::TokenTouch(int64_t id, TimeMs at) {
  MutexLock lock(mu_);
  return conn_
      ->Exec("UPDATE warden.api_tokens SET last_used_at = $1::bigint WHERE id = $2::bigint AND "
             "(last_used_at IS NULL OR last_used_at < $1::bigint)",
             Params().Add(at).Add(id))
      .status();
}

Result<std::vector<TokenInfo>> PgStore::TokenList() {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec(std::string("SELECT ") + kTokenColumns +
                                              " FROM warden.api_tokens ORDER BY id"));
  std::vector<TokenInfo> out;
  for (int i = 0; i < r.size(); ++i) out.push_back(TokenFromRow(r, i));
  return out;
}

Result<TokenInfo> PgStore::TokenRevoke(const std::string& name_or_id, const AuditEntry& audit) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec(std::string("UPDATE warden.api_tokens SET revoked_at = $1::bigint "
                                      "WHERE (name = $2 OR id::text = $2) AND revoked_at IS "
                                      "NULL RETURNING ") +
                              kTokenColumns,
                          Params().Add(now).Add(name_or_id)));
  if (r.empty()) return NotFound("no live token named '" + name_or_id + "'");
  WARDEN_RETURN_IF_ERROR(AuditLocked(audit, now));
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return TokenFromRow(r, 0);
}

Result<std::vector<AuditEntry>> PgStore::AuditList(int limit, int64_t before) {
  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec("SELECT id, at, actor, action, target, count FROM warden.audit_log "
                          "WHERE $1::bigint = 0 OR id < $1::bigint ORDER BY id DESC LIMIT "
                          "$2::int",
                          Params().Add(before).Add(limit)));
  std::vector<AuditEntry> out;
  for (int i = 0; i < r.size(); ++i) {
    out.push_back(AuditEntry{r.Int(i, 0), r.Int(i, 1), r.Text(i, 2), r.Text(i, 3), r.Text(i, 4),
                             r.Int(i, 5)});
  }
  return out;
}

}  // namespace warden::pg
