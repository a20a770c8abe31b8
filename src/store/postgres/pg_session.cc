#include "store/postgres/pg_session.h"

#include <algorithm>

#include "store/postgres/pg_schema.h"

namespace warden::pg {

Result<std::unique_ptr<WorkerSession>> PgSession::Open(const std::string& url, WorkerId id,
                                                       Millis lease) {
  std::unique_ptr<PgSession> s(new PgSession(id, lease));
  PgSession* self = s.get();
  WARDEN_ASSIGN_OR_RETURN(s->conn_,
                          Conn::Connect(url, [self](Conn& c) { return self->Setup(c); }));
  return std::unique_ptr<WorkerSession>(std::move(s));
}

Status PgSession::SetKeepAlive(Conn& conn) {
  // The server gives up on a silent client after idle + 3 probes 2 s apart:
  // at least the lease, so the lock outlives the worker's own self-fence.
  const int64_t idle_s = std::max<int64_t>(5, (lease_.count() + 999) / 1000);
  return conn.Exec("SELECT set_config('tcp_keepalives_idle', $1, false)",
                   Params().Add(std::to_string(idle_s)))
      .status();
}

Status PgSession::KeepAliveFor(Millis lease) {
  if (lease <= lease_) return Status::Ok();
  const Millis before = lease_;
  lease_ = lease;
  // Disconnected: Setup applies it on reconnecting.
  if (conn_->socket() < 0) return Status::Ok();
  Status s = SetKeepAlive(*conn_);
  if (!s.ok()) lease_ = before;  // the caller's next pass tries again
  return s;
}

Status PgSession::Setup(Conn& conn) {
  locked_ = false;
  WARDEN_RETURN_IF_ERROR(SetKeepAlive(conn));
  WARDEN_RETURN_IF_ERROR(conn.ExecScript("LISTEN warden_jobs"));
  // try: a previous session of ours that the server has not reaped yet may
  // still hold it; Drain() tries again until it is ours.
  WARDEN_ASSIGN_OR_RETURN(Rows r,
                          conn.Exec("SELECT pg_try_advisory_lock($1::int, $2::int)",
                                    Params().Add(kWorkerLockClass).Add(static_cast<int>(id_))));
  locked_ = r.Bool(0, 0);
  if (locked_) {
    // From now on a missing lock means this session ended, unless the
    // server restarts (then the recorded start time no longer matches).
    WARDEN_RETURN_IF_ERROR(
        conn.Exec("UPDATE warden.workers SET lock_server_start = extract(epoch FROM "
                  "pg_postmaster_start_time())::text, lock_epoch = lock_epoch + 1 WHERE id = "
                  "$1::bigint",
                  Params().Add(id_))
            .status());
  }
  return Status::Ok();
}

Result<bool> PgSession::Drain() {
  const int64_t session = conn_->session();
  WARDEN_ASSIGN_OR_RETURN(auto channels, conn_->ConsumeNotifications());
  // A new session may have missed notifications: treat it as a wake-up.
  bool woken = !channels.empty() || conn_->session() != session;
  if (!locked_) {
    WARDEN_RETURN_IF_ERROR(Setup(*conn_));
    woken = true;
  }
  return woken;
}

}  // namespace warden::pg
