#include "store/postgres/pg_conn.h"

#include <cstdlib>
#include <cstring>

#include "warden/text.h"
#include "store/postgres/pg_url.h"

namespace warden::pg {
namespace {

constexpr std::chrono::milliseconds kFirstBackoff{50};
constexpr std::chrono::milliseconds kMaxBackoff{2000};

// libpq's messages span lines ("...failed: Connection refused\n\tIs the
// server running...?"); warden's errors are one line.
std::string OneLine(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\t' || c == '\r' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// Quotes one array element: "a\"b" (the array literal's own escaping).
void AppendElement(std::string& out, const std::string& v) {
  out += '"';
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

// What the caller should do about an error with this SQLSTATE.
StatusCode CodeForState(const std::string& state) {
  if (state == "23505") return StatusCode::kFailedPrecondition;  // unique_violation
  if (state.rfind("23", 0) == 0) return StatusCode::kFailedPrecondition;
  if (state == "40001" || state == "40P01") return StatusCode::kAborted;  // retry the tx
  if (state == "55P03") return StatusCode::kUnavailable;  // lock_not_available (lock_timeout)
  if (state == "57014") return StatusCode::kUnavailable;  // query_canceled (timeout)
  if (state.rfind("08", 0) == 0) return StatusCode::kUnavailable;  // connection exception
  if (state.rfind("57P", 0) == 0) return StatusCode::kUnavailable;  // shutdown, restart
  if (state.rfind("53", 0) == 0) return StatusCode::kUnavailable;   // disk full, out of memory
  if (state == "25006") return StatusCode::kUnavailable;  // read-only transaction (standby)
  if (state.rfind("XX", 0) == 0) return StatusCode::kDataLoss;      // data corrupted
  if (state == "22P02" || state == "22023" || state.rfind("22", 0) == 0) {
    return StatusCode::kInvalidArgument;
  }
  return StatusCode::kInternal;
}

}  // namespace

Params& Params::Add(std::string v) {
  if (v.find('\0') != std::string::npos || InvalidUtf8At(v) != std::string_view::npos) {
    std::string valid = ValidUtf8(v);
    v.clear();
    for (char c : valid) {
      if (c == '\0') {
        v += "\xEF\xBF\xBD";
      } else {
        v += c;
      }
    }
  }
  values_.push_back(std::move(v));
  return *this;
}

Params& Params::Add(std::optional<int64_t> v) {
  if (v) return Add(*v);
  return Null();
}

Params& Params::AddTextOrNull(const std::string& v) {
  if (v.empty()) return Null();
  return Add(v);
}

Params& Params::AddArray(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return Add(s + "}");
}

Params& Params::AddArray(const std::vector<std::string>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    AppendElement(s, v[i]);
  }
  return Add(s + "}");
}

Params& Params::AddArray(const std::vector<std::optional<std::string>>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    if (v[i]) {
      AppendElement(s, *v[i]);
    } else {
      s += "NULL";
    }
  }
  return Add(s + "}");
}

std::string Rows::Text(int row, int col) const {
  if (IsNull(row, col)) return {};
  return std::string(PQgetvalue(r_.get(), row, col),
                     static_cast<size_t>(PQgetlength(r_.get(), row, col)));
}

int64_t Rows::Int(int row, int col) const {
  if (IsNull(row, col)) return 0;
  return std::strtoll(PQgetvalue(r_.get(), row, col), nullptr, 10);
}

std::optional<int64_t> Rows::OptInt(int row, int col) const {
  if (IsNull(row, col)) return std::nullopt;
  return Int(row, col);
}

bool Rows::Bool(int row, int col) const {
  return !IsNull(row, col) && PQgetvalue(r_.get(), row, col)[0] == 't';
}

int Rows::affected() const {
  const char* n = PQcmdTuples(r_.get());
  return n && *n ? std::atoi(n) : 0;
}

Result<std::unique_ptr<Conn>> Conn::Connect(const std::string& url, SessionSetup setup) {
  std::unique_ptr<Conn> conn(new Conn(url, std::move(setup)));
  WARDEN_RETURN_IF_ERROR(conn->Open());
  return conn;
}

Conn::Conn(std::string url, SessionSetup setup)
    : url_(std::move(url)), secrets_(DbSecrets(url_)), setup_(std::move(setup)) {}

Conn::~Conn() { Drop(); }

void Conn::Drop() {
  if (conn_) PQfinish(conn_);
  conn_ = nullptr;
  prepared_.clear();
}

Status Conn::Open() {
  Drop();
  // Defaults first: the URL's own settings, processed later, win.
  //  - tcp_user_timeout / keepalives: a query sent into a network partition
  //    fails in seconds instead of waiting for TCP's ~15 minute give-up.
  const char* keys[] = {"connect_timeout", "tcp_user_timeout", "keepalives_idle",
                        "keepalives_interval", "keepalives_count", "application_name",
                        "dbname", nullptr};
  const char* values[] = {"5", "10000", "5", "2", "3", "warden", url_.c_str(), nullptr};
  conn_ = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) {
    last_error_ = conn_ ? ScrubSecrets(OneLine(PQerrorMessage(conn_)), secrets_) : "out of memory";
    Drop();
    backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(backoff_ * 2, kMaxBackoff);
    next_attempt_ = std::chrono::steady_clock::now() + backoff_;
    return Unavailable("cannot connect to PostgreSQL: " + last_error_);
  }
  ++session_;
  // Server-side bounds, so a frozen or cut-off worker cannot hold row locks
  // for long, and a blocked statement gives up instead of stalling a loop:
  //  - idle_in_transaction_session_timeout: a worker frozen mid-transaction
  //    loses that session (and its row locks) after 1 s. warden's own
  //    transactions are a few statements sent back to back, never idle
  //    that long unless the process is frozen; maintenance skips locked
  //    rows meanwhile, so a frozen transaction delays only its own rows.
  //    Those can be jobs a frozen leader was rescuing: their recovery waits
  //    for this timeout, so it is kept short (2 s overran the chaos runner's
  //    bound of lease + sweep + 1.5 s);
  //  - lock_timeout: no statement waits more than 5 s for a row lock;
  //  - tcp_keepalives_*: the server notices a vanished client in ~11 s.
  Status s = ExecScript(
      "SET idle_in_transaction_session_timeout = '1s'; SET lock_timeout = '5s'; "
      "SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; "
      "SET tcp_keepalives_count = 3; SET client_min_messages = warning");
  if (s.ok() && setup_) s = setup_(*this);
  if (!s.ok()) {
    Drop();
    return s;
  }
  backoff_ = std::chrono::milliseconds(0);
  return Status::Ok();
}

bool Conn::connected() const { return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK; }

int Conn::socket() const { return connected() ? PQsocket(conn_) : -1; }

Status Conn::EnsureConnected() {
  if (connected()) return Status::Ok();
  if (std::chrono::steady_clock::now() < next_attempt_) {
    return Unavailable("PostgreSQL connection lost; reconnecting (" + last_error_ + ")");
  }
  return Open();
}

Status Conn::ErrorFrom(PGresult* r, const std::string& context) {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string msg = r ? OneLine(PQresultErrorMessage(r)) : "";
  if (msg.empty()) msg = conn_ ? OneLine(PQerrorMessage(conn_)) : "no connection";
  if (msg.rfind("ERROR: ", 0) == 0) msg = msg.substr(7);
  msg = ScrubSecrets(msg, secrets_);
  if (!connected()) {
    // The server went away mid-statement; its transaction is rolled back.
    last_error_ = msg;
    Drop();
    backoff_ = kFirstBackoff;
    next_attempt_ = std::chrono::steady_clock::now();  // first retry at once
    return Unavailable(context + ": PostgreSQL connection lost: " + msg);
  }
  const StatusCode code = state ? CodeForState(state) : StatusCode::kUnavailable;
  return Status(code, context + ": " + msg);
}

Result<Rows> Conn::Exec(const std::string& sql, const Params& params) {
  WARDEN_RETURN_IF_ERROR(EnsureConnected());
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    std::string name(1, 'w');  // "w" + to_string trips a GCC 12 false -Wrestrict
    name += std::to_string(prepared_.size());
    PGresult* prep = PQprepare(conn_, name.c_str(), sql.c_str(), 0, nullptr);
    if (prep == nullptr || PQresultStatus(prep) != PGRES_COMMAND_OK) {
      Status s = ErrorFrom(prep, "prepare");
      if (prep) PQclear(prep);
      return s;
    }
    PQclear(prep);
    it = prepared_.emplace(sql, std::move(name)).first;
  }
  std::vector<const char*> values;
  values.reserve(params.values().size());
  for (const auto& v : params.values()) values.push_back(v ? v->c_str() : nullptr);
  PGresult* r = PQexecPrepared(conn_, it->second.c_str(), static_cast<int>(values.size()),
                               values.data(), nullptr, nullptr, 0);
  const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    Status s = ErrorFrom(r, "statement failed");
    if (r) PQclear(r);
    return s;
  }
  return Rows(r);
}

Status Conn::ExecScript(const std::string& sql) {
  if (conn_ == nullptr) return Unavailable("no PostgreSQL connection");
  PGresult* r = PQexec(conn_, sql.c_str());
  const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    Status s = ErrorFrom(r, "statement failed");
    if (r) PQclear(r);
    return s;
  }
  PQclear(r);
  return Status::Ok();
}

Result<std::vector<std::string>> Conn::ConsumeNotifications() {
  WARDEN_RETURN_IF_ERROR(EnsureConnected());
  if (PQconsumeInput(conn_) == 0) return ErrorFrom(nullptr, "notifications");
  std::vector<std::string> channels;
  while (PGnotify* n = PQnotifies(conn_)) {
    channels.emplace_back(n->relname);
    PQfreemem(n);
  }
  return channels;
}

Result<std::unique_ptr<Tx>> Tx::Begin(Conn& conn) {
  WARDEN_RETURN_IF_ERROR(conn.EnsureConnected());
  WARDEN_RETURN_IF_ERROR(conn.ExecScript("BEGIN"));
  return std::unique_ptr<Tx>(new Tx(conn));
}

Tx::~Tx() {
  if (!done_ && conn_.connected()) (void)conn_.ExecScript("ROLLBACK");
}

Status Tx::Commit() {
  done_ = true;
  return conn_.ExecScript("COMMIT");
}

}  // namespace warden::pg
