// A worker's PostgreSQL session: one dedicated connection that LISTENs on
// `warden_jobs` and holds a session-level advisory lock on the worker's id.
//
// When the worker process dies its connection closes, the server drops the
// lock at once, and any sweeper that sees the lock gone (WorkerListLive's
// session_lost) recovers the worker's jobs without waiting for a lease.
// When only the connection is lost, Drain() reconnects, takes the lock
// again and re-LISTENs within milliseconds; the sweeper confirms a lost
// session before acting on it. The server drops a silent client's session
// only after `lease` plus the keepalive probes, so a worker cut off by a
// partition has fenced itself (at 3/4 of its lease) before its lock can
// be taken as proof of death. That lease grows (KeepAliveFor) when the
// worker claims a job whose own lease is longer.
//
// Thread safety: one thread (the worker's session loop).
#pragma once

#include <memory>
#include <string>

#include "store/postgres/pg_conn.h"
#include "store/store.h"

namespace warden::pg {

class PgSession final : public WorkerSession {
 public:
  static Result<std::unique_ptr<WorkerSession>> Open(const std::string& url, WorkerId id,
                                                     Millis lease);
  int fd() override { return conn_->socket(); }
  Result<bool> Drain() override;
  Status KeepAliveFor(Millis lease) override;
  bool LossProvesDeath() const override { return true; }
  bool Holds() const override { return locked_ && conn_->socket() >= 0; }

 private:
  PgSession(WorkerId id, Millis lease) : id_(id), lease_(lease) {}
  Status Setup(Conn& conn);
  Status SetKeepAlive(Conn& conn);

  WorkerId id_;
  Millis lease_;
  bool locked_ = false;
  std::unique_ptr<Conn> conn_;
};

}  // namespace warden::pg
