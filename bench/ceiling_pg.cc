// The ceiling on PostgreSQL: one statement per transaction (autocommit),
// arrays for batches, the server's fsync and synchronous_commit as set.
#include <libpq-fe.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ceiling.h"

namespace bench {
namespace {

// "{1,2,3}": a bigint[] literal.
std::string ArrayLiteral(const std::vector<Claimed>& jobs, bool tokens) {
  std::string s = "{";
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(tokens ? jobs[i].token : jobs[i].id);
  }
  return s + "}";
}

class PgCeiling : public CeilingStore {
 public:
  explicit PgCeiling(const std::string& url) : conn_(PQconnectdb(url.c_str())) {}
  ~PgCeiling() override { PQfinish(conn_); }

  bool Reset() override {
    if (PQstatus(conn_) != CONNECTION_OK) return Fail("connect", nullptr);
    return Run(
        "SET client_min_messages = warning; DROP SCHEMA IF EXISTS ceiling CASCADE; "
        "CREATE SCHEMA ceiling; "
        "CREATE TABLE ceiling.jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
        " state smallint NOT NULL, lease_token bigint NOT NULL DEFAULT 0,"
        " payload json NOT NULL); "
        "CREATE INDEX jobs_available ON ceiling.jobs (id) WHERE state = 0",
        {}, PGRES_COMMAND_OK);
  }

  bool Insert(int batch) override {
    // The payloads travel as data, as a queue's would.
    std::string payloads = "{";
    for (int i = 0; i < batch; ++i) payloads += i ? ",\"{}\"" : "\"{}\"";
    payloads += "}";
    return Run(
        "INSERT INTO ceiling.jobs (state, payload) "
        "SELECT 0, p::json FROM unnest($1::text[]) AS u(p)",
        {payloads}, PGRES_COMMAND_OK);
  }

  bool Claim(int batch, std::vector<Claimed>* out) override {
    out->clear();
    PGresult* r = Exec(
        "UPDATE ceiling.jobs SET state = 1, lease_token = lease_token + 1 "
        "WHERE id IN (SELECT id FROM ceiling.jobs WHERE state = 0 ORDER BY id "
        "LIMIT $1::int FOR UPDATE SKIP LOCKED) RETURNING id, lease_token",
        {std::to_string(batch)});
    if (PQresultStatus(r) != PGRES_TUPLES_OK) return Fail("claim", r);
    for (int i = 0; i < PQntuples(r); ++i) {
      out->push_back({std::atoll(PQgetvalue(r, i, 0)), std::atoll(PQgetvalue(r, i, 1))});
    }
    PQclear(r);
    return true;
  }

  bool Complete(const std::vector<Claimed>& jobs, bool remove) override {
    const char* sql =
        remove ? "DELETE FROM ceiling.jobs j USING unnest($1::bigint[], $2::bigint[]) AS "
                 "u(id, tok) WHERE j.id = u.id AND j.lease_token = u.tok AND j.state = 1"
               : "UPDATE ceiling.jobs j SET state = 2 FROM unnest($1::bigint[], "
                 "$2::bigint[]) AS u(id, tok) WHERE j.id = u.id AND j.lease_token = u.tok "
                 "AND j.state = 1";
    PGresult* r = Exec(sql, {ArrayLiteral(jobs, false), ArrayLiteral(jobs, true)});
    if (PQresultStatus(r) != PGRES_COMMAND_OK) return Fail("complete", r);
    const bool all = std::atoll(PQcmdTuples(r)) == static_cast<long long>(jobs.size());
    PQclear(r);
    return all || Fail("complete: fenced off", nullptr);
  }

 private:
  PGresult* Exec(const char* sql, const std::vector<std::string>& params) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    if (params.empty()) return PQexec(conn_, sql);
    return PQexecParams(conn_, sql, static_cast<int>(values.size()), nullptr, values.data(),
                        nullptr, nullptr, 0);
  }
  bool Run(const char* sql, const std::vector<std::string>& params, ExecStatusType want) {
    PGresult* r = Exec(sql, params);
    if (PQresultStatus(r) != want) return Fail(sql, r);
    PQclear(r);
    return true;
  }
  bool Fail(const char* what, PGresult* r) {
    std::fprintf(stderr, "ceiling pg %s: %s\n", what, PQerrorMessage(conn_));
    PQclear(r);
    return false;
  }

  PGconn* conn_;
};

}  // namespace

std::unique_ptr<CeilingStore> OpenPgCeiling(const std::string& url) {
  return std::make_unique<PgCeiling>(url);
}

}  // namespace bench
