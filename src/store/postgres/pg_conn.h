// A thin RAII layer over libpq: one connection that reconnects with backoff,
// prepares each statement once per session, and turns every error into a
// Status whose code says how to react (connection lost, server shutting
// down, lock timeout, serialization failure -> kUnavailable / kAborted; a
// unique violation -> kFailedPrecondition; a full disk -> kUnavailable).
//
// Every value is sent as a text parameter ($1, $2 ...); SQL text never
// contains data.
//
// Thread safety: none; PgStore serialises access with its own mutex.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "warden/status.h"

namespace warden::pg {

// Text parameters for one statement. An empty optional is SQL NULL.
class Params {
 public:
  Params& Add(int64_t v) { values_.push_back(std::to_string(v)); return *this; }
  Params& Add(int v) { return Add(static_cast<int64_t>(v)); }
  Params& Add(bool v) { values_.push_back(v ? "t" : "f"); return *this; }
  // Text PostgreSQL cannot hold (bytes that are not UTF-8, NUL) is stored
  // with U+FFFD in their place rather than failing the statement: outside
  // text such as a job's stderr must not cost the job its outcome.
  Params& Add(std::string v);
  Params& Add(const char* v) { return Add(std::string(v)); }
  Params& Add(std::optional<int64_t> v);
  Params& Null() { values_.emplace_back(); return *this; }
  // Empty string -> NULL (optional keys).
  Params& AddTextOrNull(const std::string& v);
  // A PostgreSQL array literal for `$n::bigint[]` / `$n::text[]`.
  Params& AddArray(const std::vector<int64_t>& v);
  Params& AddArray(const std::vector<std::string>& v);
  Params& AddArray(const std::vector<std::optional<std::string>>& v);

  const std::vector<std::optional<std::string>>& values() const { return values_; }

 private:
  std::vector<std::optional<std::string>> values_;
};

class Rows {
 public:
  explicit Rows(PGresult* r) : r_(r, &PQclear) {}

  int size() const { return PQntuples(r_.get()); }
  bool empty() const { return size() == 0; }
  bool IsNull(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
  std::string Text(int row, int col) const;  // "" for NULL
  int64_t Int(int row, int col) const;       // 0 for NULL
  std::optional<int64_t> OptInt(int row, int col) const;
  bool Bool(int row, int col) const;
  int affected() const;  // rows changed by INSERT/UPDATE/DELETE

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> r_;
};

class Conn {
 public:
  // Runs after every (re)connect, before any statement: session settings,
  // LISTEN, locks. Its failure drops the connection.
  using SessionSetup = std::function<Status(Conn&)>;

  // Connects now; fails (kUnavailable) if the server cannot be reached.
  static Result<std::unique_ptr<Conn>> Connect(const std::string& url,
                                               SessionSetup setup = nullptr);
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // A prepared statement with parameters.
  Result<Rows> Exec(const std::string& sql, const Params& params = {});
  // Statements without parameters (DDL, BEGIN, SET); several may be joined
  // with ';'.
  Status ExecScript(const std::string& sql);

  // Reconnects if the connection was lost, at most once per backoff step
  // (50 ms doubling to 2 s). Exec calls it first.
  Status EnsureConnected();
  bool connected() const;
  // The socket, for poll(): readable when a notification (or a broken
  // connection) arrives. -1 when disconnected.
  int socket() const;
  // Reads what arrived on the socket; returns the channels notified.
  Result<std::vector<std::string>> ConsumeNotifications();
  // Bumped on every successful (re)connect: session state (locks, LISTEN,
  // prepared statements) from an earlier session is gone.
  int64_t session() const { return session_; }
  PGconn* raw() { return conn_; }

 private:
  Conn(std::string url, SessionSetup setup);
  Status Open();
  Status ErrorFrom(PGresult* r, const std::string& context);
  void Drop();

  std::string url_;
  // The URL's passwords: libpq's messages may quote them (ScrubSecrets).
  std::vector<std::string> secrets_;
  SessionSetup setup_;
  PGconn* conn_ = nullptr;
  int64_t session_ = 0;
  std::unordered_map<std::string, std::string> prepared_;  // sql -> name
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::milliseconds backoff_{0};
  std::string last_error_;
};

// BEGIN on construction, ROLLBACK unless committed. A rollback on a broken
// connection is a no-op: the server already rolled back.
class Tx {
 public:
  static Result<std::unique_ptr<Tx>> Begin(Conn& conn);
  ~Tx();
  Status Commit();

 private:
  explicit Tx(Conn& conn) : conn_(conn) {}
  Conn& conn_;
  bool done_ = false;
};

}  // namespace warden::pg
