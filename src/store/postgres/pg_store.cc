// PgStore: opening, migrating, the time and inserts; the other pg_store_*.cc hold the rest.
#include "store/postgres/pg_store.h"

#include <algorithm>
#include <numeric>

#include "core/first_run.h"
#include "warden/text.h"
#include "store/postgres/pg_schema.h"

namespace warden::pg {

namespace {

// Whether a failed connection was refused for a reason waiting cannot
// mend: the server's own refusals (a password, a database or role that does
// not exist, pg_hba.conf) and libpq's rejections of the URL. Everything else
// (connection refused, timed out, the server starting up or shutting down,
// too many clients) may pass: a starting worker retries those.
bool RefusedForGood(const std::string& message) {
  for (const char* mark :
       {"password authentication failed", "does not exist", "no pg_hba.conf entry",
        "no password supplied", "password is required", "invalid ", "missing \"=\""}) {
    if (message.find(mark) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<Store>> PgStore::Open(const std::string& url, StoreOptions options) {
  auto conn = Conn::Connect(url);
  // Only here, at open: a connection lost later stays kUnavailable, and the
  // loops that use it go on retrying (a password changed under a running
  // worker is an outage to wait out, not a reason to drop its outcomes).
  if (!conn.has_value() && RefusedForGood(conn.error().message())) {
    return FailedPrecondition(conn.error().message());
  }
  if (!conn.has_value()) return conn.error();
  std::unique_ptr<PgStore> store(
      new PgStore(url, std::move(conn).value(), options.database_clock));
  WARDEN_RETURN_IF_ERROR(store->Migrate().Annotate("cannot use the PostgreSQL database"));
  return std::unique_ptr<Store>(std::move(store));
}

Status PgStore::Migrate() {
  MutexLock lock(mu_);
  return pg::Migrate(*conn_);
}

Result<int> PgStore::SchemaVersion() {
  MutexLock lock(mu_);
  return ReadSchemaVersion(*conn_);
}

Result<TimeMs> PgStore::NowLocked() {
  if (fake_clock_) return fake_clock_->NowMs();
  WARDEN_ASSIGN_OR_RETURN(Rows r, conn_->Exec("SELECT warden.now_ms()"));
  return r.Int(0, 0);
}

Result<TimeMs> PgStore::Now() {
  MutexLock lock(mu_);
  return NowLocked();
}

Status PgStore::CheckWritable() {
  MutexLock lock(mu_);
  // A write that changes nothing still needs a writable, reachable primary.
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  return conn_->Exec("UPDATE warden.leaders SET holder = holder WHERE false").status();
}

namespace {

const char* const kInsertColumns =
    "queue, task, command, payload, priority, state, run_at, max_attempts, max_crashes, retry, "
    "delivery, timeout_ms, lease_ms, start_deadline_at, unique_key, concurrency_key, created_at";

std::optional<std::string> OptText(std::optional<int64_t> v) {
  if (!v) return std::nullopt;
  return std::to_string(*v);
}

std::optional<std::string> TextOrNull(const std::string& v) {
  if (v.empty()) return std::nullopt;
  return v;
}

// $1-$16 of InsertBatchLocked's statement: the jobs `pick` names, a column
// an array.
Params BatchArrays(std::span<const JobSpec> specs, std::span<const size_t> pick) {
  std::vector<std::string> queue, task, command, payload, state, retry, delivery;
  std::vector<int64_t> priority, delay, max_attempts, max_crashes, timeout;
  std::vector<std::optional<std::string>> lease, deadline, ckey, at;
  for (size_t k : pick) {
    const JobSpec& s = specs[k];
    queue.push_back(s.queue);
    task.push_back(s.task);
    command.push_back(s.command);
    payload.push_back(JsonText(s.payload));
    priority.push_back(s.priority);
    state.push_back(s.delay.count() > 0 ? "scheduled" : "available");
    delay.push_back(s.delay.count());
    max_attempts.push_back(s.max_attempts);
    max_crashes.push_back(s.max_crashes);
    retry.push_back(RetryPolicyName(s.retry));
    delivery.push_back(DeliveryName(s.delivery));
    timeout.push_back(s.timeout.count());
    lease.push_back(s.lease ? OptText(s.lease->count()) : std::nullopt);
    // From the first run time: the SQL adds run_at (r.ra below).
    deadline.push_back(s.start_deadline ? OptText(s.start_deadline->count()) : std::nullopt);
    ckey.push_back(TextOrNull(s.concurrency_key));
    at.push_back(s.run_at ? OptText(*s.run_at) : std::nullopt);
  }
  Params p;
  p.AddArray(queue).AddArray(task).AddArray(command).AddArray(payload).AddArray(priority);
  p.AddArray(state).AddArray(delay).AddArray(max_attempts).AddArray(max_crashes);
  p.AddArray(retry).AddArray(delivery).AddArray(timeout).AddArray(lease).AddArray(deadline);
  p.AddArray(ckey).AddArray(at);
  return p;
}

}  // namespace

Result<std::vector<EnqueueResult>> PgStore::JobInsertMany(std::span<const JobSpec> specs) {
  // Jobs without a unique key go in one statement per chunk; each unique
  // key needs its own look-up first.
  constexpr size_t kChunk = 5000;
  const bool one_statement =
      specs.size() <= kChunk && std::all_of(specs.begin(), specs.end(), [](const JobSpec& s) {
        return s.unique_key.empty();
      });
  if (one_statement) {
    // Atomic on its own, and one round trip instead of four (BEGIN, the
    // time, INSERT, COMMIT): what a single enqueue costs before its commit.
    std::vector<size_t> all(specs.size());
    std::iota(all.begin(), all.end(), 0);
    Params arrays = BatchArrays(specs, all);
    MutexLock lock(mu_);
    return InsertBatchLocked(std::move(arrays), specs.size(),
                             fake_clock_ ? std::optional<TimeMs>(fake_clock_->NowMs())
                                         : std::nullopt);
  }
  // In the order the loop below used to send them: each unique key where it
  // stands, the others a chunk at a time. Every chunk's arrays are built
  // before the transaction begins, so that its statements go back to back:
  // a session idle in a transaction for 1 s is ended by the server
  // (pg_conn.cc), and building 5,000 jobs' arrays between two statements
  // took longer than that under ThreadSanitizer.
  struct Step {
    size_t unique = 0;          // the job, when `plain` is empty
    std::vector<size_t> plain;  // a chunk of jobs without a key
    Params arrays;
  };
  std::vector<Step> steps;
  std::vector<size_t> plain;
  auto close_chunk = [&] {
    if (plain.empty()) return;
    Params arrays = BatchArrays(specs, plain);
    steps.push_back(Step{0, std::move(plain), std::move(arrays)});
    plain.clear();
  };
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i].unique_key.empty()) {
      steps.push_back(Step{i, {}, Params()});
      continue;
    }
    plain.push_back(i);
    if (plain.size() == kChunk) close_chunk();
  }
  close_chunk();

  MutexLock lock(mu_);
  WARDEN_ASSIGN_OR_RETURN(auto tx, Tx::Begin(*conn_));
  WARDEN_ASSIGN_OR_RETURN(TimeMs now, NowLocked());
  std::vector<EnqueueResult> out(specs.size());
  for (Step& step : steps) {
    if (step.plain.empty()) {
      WARDEN_ASSIGN_OR_RETURN(out[step.unique], InsertUniqueLocked(specs[step.unique], now));
      continue;
    }
    WARDEN_ASSIGN_OR_RETURN(auto ids,
                            InsertBatchLocked(std::move(step.arrays), step.plain.size(), now));
    for (size_t k = 0; k < step.plain.size(); ++k) out[step.plain[k]] = ids[k];
  }
  WARDEN_RETURN_IF_ERROR(tx->Commit());
  return out;
}

Result<std::vector<EnqueueResult>> PgStore::InsertBatchLocked(Params p, size_t count,
                                                              std::optional<TimeMs> now) {
  // Times are offsets from the statement's own "now" (the given one, else
  // the server's), so the statement needs no transaction around it.
  p.Add(now);
  // Identity values are drawn in row order, so sorted ids match the input.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec(std::string("WITH n AS MATERIALIZED (SELECT coalesce($17::bigint, "
                                      "warden.now_ms()) AS now) INSERT INTO warden.jobs (") +
                              kInsertColumns +
                              // First run: an absolute time (a past one is now), else now +
                              // delay, as FirstRunAt (core/first_run.h), by this clock.
                              ") SELECT q, t, c, p::json, pr, CASE WHEN v.at IS NULL THEN st "
                              "WHEN r.ra > n.now THEN 'scheduled' ELSE 'available' END, r.ra, "
                              "ma, mc, re, de, tm, lm, r.ra + sd, NULL, ck, n.now FROM n, "
                              "unnest($1::text[], $2::text[], "
                              "$3::text[], $4::text[], $5::int[], $6::text[], $7::bigint[], "
                              "$8::int[], $9::int[], $10::text[], $11::text[], $12::bigint[], "
                              "$13::bigint[], $14::bigint[], $15::text[], $16::bigint[]) WITH "
                              "ORDINALITY AS v(q, t, c, p, pr, st, dl, ma, mc, re, de, tm, lm, "
                              "sd, ck, at, ord), LATERAL (SELECT CASE WHEN v.at IS NULL THEN "
                              "n.now + v.dl ELSE greatest(n.now, v.at) END AS ra) r "
                              "ORDER BY ord RETURNING id",
                          p));
  std::vector<JobId> ids;
  for (int i = 0; i < r.size(); ++i) ids.push_back(r.Int(i, 0));
  std::sort(ids.begin(), ids.end());
  if (ids.size() != count) return Internal("batch insert returned a wrong row count");
  std::vector<EnqueueResult> out;
  for (JobId id : ids) out.push_back(EnqueueResult{id, true});
  return out;
}

Result<EnqueueResult> PgStore::InsertUniqueLocked(const JobSpec& s, TimeMs now) {
  const char* const find =
      "SELECT id FROM warden.jobs WHERE unique_key = $1 AND state IN ('scheduled', "
      "'available', 'running', 'retryable')";
  WARDEN_ASSIGN_OR_RETURN(Rows found, conn_->Exec(find, Params().Add(s.unique_key)));
  if (!found.empty()) return EnqueueResult{found.Int(0, 0), false};
  const TimeMs at = FirstRunAt(s, now);
  Params p;
  p.Add(s.queue).Add(s.task).Add(s.command).Add(JsonText(s.payload)).Add(s.priority);
  p.Add(JobStateName(FirstState(s, now))).Add(at).Add(s.max_attempts);
  p.Add(s.max_crashes).Add(RetryPolicyName(s.retry)).Add(DeliveryName(s.delivery));
  p.Add(static_cast<int64_t>(s.timeout.count()));
  p.Add(s.lease ? std::optional<int64_t>(s.lease->count()) : std::nullopt);
  p.Add(s.start_deadline ? std::optional<int64_t>(at + s.start_deadline->count())
                         : std::nullopt);
  p.Add(s.unique_key).AddTextOrNull(s.concurrency_key).Add(now);
  // ON CONFLICT: another transaction may insert the same key meanwhile.
  WARDEN_ASSIGN_OR_RETURN(
      Rows r, conn_->Exec(std::string("INSERT INTO warden.jobs (") + kInsertColumns +
                              ") VALUES ($1, $2, $3, $4::json, $5::int, $6, $7::bigint, "
                              "$8::int, $9::int, $10, $11, $12::bigint, $13::bigint, "
                              "$14::bigint, $15, $16, $17::bigint) ON CONFLICT (unique_key) "
                              "WHERE unique_key IS NOT NULL AND state IN ('scheduled', "
                              "'available', 'running', 'retryable') DO NOTHING RETURNING id",
                          p));
  if (!r.empty()) return EnqueueResult{r.Int(0, 0), true};
  WARDEN_ASSIGN_OR_RETURN(Rows again, conn_->Exec(find, Params().Add(s.unique_key)));
  if (again.empty()) return Aborted("unique key '" + s.unique_key + "' changed hands; retry");
  return EnqueueResult{again.Int(0, 0), false};
}

}  // namespace warden::pg
