#include "store/sqlite/schema.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace warden::sqlite {
namespace {

// Times are ms since the epoch (UTC). States and kinds are docs/design.md's
// names.
const char* const kMigration1 = R"sql(
CREATE TABLE jobs (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  queue             TEXT    NOT NULL,
  task              TEXT    NOT NULL,
  command           TEXT    NOT NULL DEFAULT '',
  payload           TEXT    NOT NULL,
  priority          INTEGER NOT NULL DEFAULT 0,
  state             TEXT    NOT NULL,
  run_at            INTEGER NOT NULL,
  attempt           INTEGER NOT NULL DEFAULT 0,
  charged           INTEGER NOT NULL DEFAULT 0,
  crashes           INTEGER NOT NULL DEFAULT 0,
  max_attempts      INTEGER NOT NULL,
  max_crashes       INTEGER NOT NULL,
  retry             TEXT    NOT NULL,
  delivery          TEXT    NOT NULL,
  timeout_ms        INTEGER NOT NULL,
  lease_ms          INTEGER,
  active_lease_ms   INTEGER,
  start_deadline_at INTEGER,
  unique_key        TEXT,
  concurrency_key   TEXT,
  worker_id         INTEGER,
  lease_token       INTEGER NOT NULL DEFAULT 0,
  lease_expires_at  INTEGER,
  started_mark      INTEGER NOT NULL DEFAULT 0,
  cancel_requested  INTEGER NOT NULL DEFAULT 0,
  last_error        TEXT,
  checkpoint        TEXT,
  result            TEXT,
  created_at        INTEGER NOT NULL,
  started_at        INTEGER,
  finished_at       INTEGER
);
-- Claiming walks this index in order and stops at the batch size, so its
-- cost does not grow with the backlog.
CREATE INDEX jobs_claim ON jobs (queue, priority DESC, run_at, id) WHERE state = 'available';
CREATE INDEX jobs_due ON jobs (run_at) WHERE state IN ('scheduled', 'retryable');
CREATE INDEX jobs_running_worker ON jobs (worker_id) WHERE state = 'running';
CREATE INDEX jobs_running_lease ON jobs (lease_expires_at) WHERE state = 'running';
CREATE INDEX jobs_deadline ON jobs (start_deadline_at)
  WHERE start_deadline_at IS NOT NULL AND state IN ('scheduled', 'available', 'retryable');
CREATE INDEX jobs_state ON jobs (state, id);
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
-- Invariant 4 held by the database itself: one running job per key.
CREATE UNIQUE INDEX jobs_running_ckey ON jobs (concurrency_key)
  WHERE state = 'running' AND concurrency_key IS NOT NULL;
CREATE UNIQUE INDEX jobs_live_unique ON jobs (unique_key)
  WHERE unique_key IS NOT NULL AND state IN ('scheduled', 'available', 'running', 'retryable');

CREATE TABLE attempts (
  job_id        INTEGER NOT NULL,
  attempt       INTEGER NOT NULL,
  worker_id     INTEGER NOT NULL,
  lease_token   INTEGER NOT NULL,
  claimed_at    INTEGER NOT NULL,
  started_at    INTEGER,
  finished_at   INTEGER,
  outcome       TEXT    NOT NULL DEFAULT 'running',
  error_message TEXT,
  exit_code     INTEGER,
  signal        INTEGER,
  stderr_tail   TEXT,
  PRIMARY KEY (job_id, attempt)
) WITHOUT ROWID;
CREATE INDEX attempts_outcome ON attempts (outcome) WHERE outcome <> 'succeeded';

CREATE TABLE workers (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  name           TEXT    NOT NULL,
  node           TEXT    NOT NULL,
  boot_id        TEXT    NOT NULL,
  pid_ns         TEXT    NOT NULL DEFAULT '',
  pid            INTEGER NOT NULL,
  pid_start      INTEGER NOT NULL,
  version        TEXT    NOT NULL,
  queues         TEXT    NOT NULL,
  tasks          TEXT    NOT NULL,
  concurrency    INTEGER NOT NULL,
  state          TEXT    NOT NULL,
  started_at     INTEGER NOT NULL,
  last_heartbeat INTEGER NOT NULL,
  stopped_at     INTEGER,
  death_reason   TEXT
);
-- Two live processes with one name are refused.
CREATE UNIQUE INDEX workers_live_name ON workers (name) WHERE state IN ('active', 'draining');

CREATE TABLE leaders (
  name       TEXT PRIMARY KEY,
  holder     INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);

-- Completions and failures rejected by fencing: recovery is data.
CREATE TABLE fenced_writes (
  id          INTEGER PRIMARY KEY,
  job_id      INTEGER NOT NULL,
  lease_token INTEGER NOT NULL,
  worker_id   INTEGER NOT NULL,
  at          INTEGER NOT NULL,
  what        TEXT    NOT NULL
);
)sql";

// A job's usual life (available, running, succeeded) rewrote entries of
// these two indexes at every step, under the one write lock: they now leave
// out the states that path passes through and that other indexes cover.
// Running jobs are found through jobs_running_worker (queries name it), and
// attempts are only ever counted by outcome for the lost ones.
const char* const kMigration2 = R"sql(
DROP INDEX jobs_state;
CREATE INDEX jobs_state ON jobs (state, id) WHERE state <> 'running';
DROP INDEX attempts_outcome;
CREATE INDEX attempts_lost ON attempts (job_id) WHERE outcome = 'lost';
)sql";

// Three more entries a job's usual life rewrote under the write lock:
// - jobs_state no longer holds available jobs: jobs_claim has every one.
// - jobs_running_lease is gone: the sweep's look for expired leases reads
//   the running jobs through jobs_running_worker (as many as the live
//   workers' slots), where the index cost an entry at every claim, every
//   completion and, for each running job, every heartbeat.
// - An attempt is no longer written at its claim and again at its end: the
//   job row holds the attempt in progress (worker_id, lease_token,
//   started_at, attempt_started_at), and `attempts` gets a row when an
//   attempt ends any other way than in success. A succeeded attempt is the
//   job's last for good (a succeeded job cannot be retried), so the row
//   describes it. AttemptsLocked puts the two together.
const char* const kMigration3 = R"sql(
DROP INDEX jobs_state;
CREATE INDEX jobs_state ON jobs (state, id) WHERE state NOT IN ('running', 'available');
DROP INDEX jobs_running_lease;
ALTER TABLE jobs ADD COLUMN attempt_started_at INTEGER;
)sql";

// What a person needs to see, kept since this version: whether a worker
// runs command jobs (so that a job nobody can run is named: `warden add`
// warns, `warden stats` lists it), and a failed command's stdout tail
// beside its stderr tail (a job that reports its error on stdout left
// nothing to read).
const char* const kMigration4 = R"sql(
ALTER TABLE workers ADD COLUMN allow_commands INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN stdout_tail TEXT;
)sql";

// How long a maintenance leader's renewal is good for, as the leader set
// it: the other workers judge its silence by watching the row stay
// unchanged that long (core/silence.h), whatever their own settings.
const char* const kMigration5 = R"sql(
ALTER TABLE leaders ADD COLUMN ttl_ms INTEGER NOT NULL DEFAULT 0;
)sql";

// The operator surface: paused queues (the claim skips them), API tokens
// (only a hash of each secret), and the audit log of operator actions.
const char* const kMigration6 = R"sql(
CREATE TABLE queue_pauses (
  queue     TEXT    PRIMARY KEY,
  paused_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE api_tokens (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT    NOT NULL,
  scope      TEXT    NOT NULL,
  hash       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (name) WHERE revoked_at IS NULL;
CREATE TABLE audit_log (
  id     INTEGER PRIMARY KEY AUTOINCREMENT,
  at     INTEGER NOT NULL,
  actor  TEXT    NOT NULL,
  action TEXT    NOT NULL,
  target TEXT    NOT NULL,
  count  INTEGER NOT NULL
);
)sql";

// Bulk operations (warden/bulk.h): each batch moves `cursor` down in its
// own transaction, so a restart resumes where the last commit left off;
// `owner` and `lease_expires_at` say which process runs it now.
const char* const kMigration7 = R"sql(
CREATE TABLE bulk_ops (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  action           TEXT    NOT NULL,
  filter           TEXT    NOT NULL,
  actor            TEXT    NOT NULL,
  state            TEXT    NOT NULL,
  high_water       INTEGER NOT NULL,
  cursor           INTEGER NOT NULL,
  total            INTEGER NOT NULL,
  done             INTEGER NOT NULL DEFAULT 0,
  skipped          INTEGER NOT NULL DEFAULT 0,
  batches          INTEGER NOT NULL DEFAULT 0,
  created_at       INTEGER NOT NULL,
  finished_at      INTEGER,
  owner            TEXT,
  lease_expires_at INTEGER
);
CREATE INDEX bulk_ops_running ON bulk_ops (id) WHERE state = 'running';
)sql";

// Metrics: each worker's snapshot of what it counted (core/metrics.h), and
// the totals of the rows Prune deleted, so that the sums never go down.
const char* const kMigrationMetrics = R"sql(
ALTER TABLE workers ADD COLUMN metrics TEXT;
CREATE TABLE metrics_retired (
  series TEXT PRIMARY KEY,
  value  REAL NOT NULL
) WITHOUT ROWID;
)sql";

// Schema 9: the jobs by queue and state, kept exact by the statements that
// change jobs (store/sqlite/job_counts.h), so that `/metrics`, `warden
// queues` and the stats read a row per queue and state instead of counting
// every job (issue 20: 0.6 s a scrape at a million jobs). Each statement
// that changes jobs adds its net change per (queue, state) in its own
// transaction, so a reader sees exactly the committed jobs. Not triggers:
// a row trigger ran its program for every job of every claim and
// completion under the one write lock (measured: +1.4 us a transition with
// a WHEN that skipped them, +3.4 us without), where a statement's upserts
// cost the same for a batch of one or of 500. Rows that fall to 0 stay;
// readers skip them. The counts start from the rows already there, in the
// migration's transaction (Migrate runs every migration in one).
// jobs_crash_loop holds only quarantined jobs (none on the job path): the
// stats count them without reading every job.
const char* const kMigrationJobCounts = R"sql(
CREATE TABLE IF NOT EXISTS job_counts (
  queue TEXT    NOT NULL,
  state TEXT    NOT NULL,
  n     INTEGER NOT NULL,
  PRIMARY KEY (queue, state)
) WITHOUT ROWID;
DELETE FROM job_counts;
INSERT INTO job_counts (queue, state, n) SELECT queue, state, count(*) FROM jobs GROUP BY queue, state;
CREATE INDEX IF NOT EXISTS jobs_crash_loop ON jobs (id) WHERE last_error = 'crash_loop';
)sql";

// A job's recovery timeline: how each lost attempt's loss was found, when
// the job could run again, and its writes that fencing refused (read by job).
const char* const kMigrationTimeline = R"sql(
ALTER TABLE attempts ADD COLUMN lost_by TEXT;
ALTER TABLE attempts ADD COLUMN runnable_at INTEGER;
CREATE INDEX fenced_writes_job ON fenced_writes (job_id);
)sql";

// Schema 11: job_counts by queue, task, command or not, and state, so that
// the jobs no live worker can run (Client::Unserved: `GET /v1/stats`,
// `warden stats`, `warden add`'s warning) are found from a row per group
// instead of a GROUP BY over every waiting job (1.4 s at a million jobs).
// The readers by queue and state add a queue's rows up. A batch of one task
// costs the job path what it cost before: one upsert per group and state.
// jobs_due_group gives each scheduled or retryable group its soonest run_at
// in one probe; it holds only jobs off the usual path (a job enqueued to run
// now, claimed and completed never enters it). The counts start from the
// rows already there, in the migration's transaction.
const char* const kMigrationGroupCounts = R"sql(
DROP TABLE IF EXISTS job_counts;
CREATE TABLE job_counts (
  queue   TEXT    NOT NULL,
  state   TEXT    NOT NULL,
  task    TEXT    NOT NULL,
  command INTEGER NOT NULL,
  n       INTEGER NOT NULL,
  PRIMARY KEY (queue, state, task, command)
) WITHOUT ROWID;
INSERT INTO job_counts (queue, state, task, command, n)
  SELECT queue, state, task, command <> '', count(*) FROM jobs GROUP BY 1, 2, 3, 4;
CREATE INDEX IF NOT EXISTS jobs_due_group ON jobs (queue, task, command <> '', state, run_at)
  WHERE state IN ('scheduled', 'retryable');
)sql";

// Schema 12: flow control (warden/flow.h). A queue's limits, and the
// record of its claims for the rate window: one row per claim moment (a
// batch is one row), pruned by the claims of that queue as the window
// moves on. Only limited queues have rows; a claim reads queue_limits
// beside queue_pauses in the one statement it made before.
const char* const kMigrationFlow = R"sql(
CREATE TABLE IF NOT EXISTS queue_limits (
  queue       TEXT    PRIMARY KEY,
  concurrency INTEGER,
  rate_count  INTEGER,
  rate_ms     INTEGER,
  set_at      INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS queue_starts (
  queue TEXT    NOT NULL,
  at    INTEGER NOT NULL,
  n     INTEGER NOT NULL,
  PRIMARY KEY (queue, at)
) WITHOUT ROWID;
)sql";

// Schema 13: the node registry (warden/nodes.h). A removed node keeps its
// row (present = 0) so that its workers are known to be on a removed node;
// workers_node finds a node's workers for its capacity and `nodes ls`. A
// worker's node may now be a name it is given (`--node`), so its host name
// gets a column of its own: deaths are proven by host ('' in older rows,
// whose node is their host).
const char* const kMigrationNodes = R"sql(
CREATE TABLE IF NOT EXISTS nodes (
  name       TEXT    PRIMARY KEY,
  present    INTEGER NOT NULL,
  enabled    INTEGER NOT NULL,
  capacity   INTEGER,
  updated_at INTEGER NOT NULL,
  removed_at INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS workers_node ON workers (node);
ALTER TABLE workers ADD COLUMN host TEXT NOT NULL DEFAULT '';
)sql";

// Schema 14: a job lost or crashed on a node is kept from that node until
// avoid_until, when another node can take it (core/node_preference.h).
// Claims read the job row anyway (its task, command and keys): no index.
const char* const kMigrationAvoidNode = R"sql(
ALTER TABLE jobs ADD COLUMN avoid_node TEXT;
ALTER TABLE jobs ADD COLUMN avoid_until INTEGER;
)sql";

const std::vector<const char*> kMigrations = {kMigration1, kMigration2, kMigration3,
                                              kMigration4, kMigration5, kMigration6,
                                              kMigration7, kMigrationMetrics,
                                              kMigrationJobCounts,
                                              kMigrationTimeline,
                                              kMigrationGroupCounts,
                                              kMigrationFlow, kMigrationNodes,
                                              kMigrationAvoidNode};

// Every table and index the migrations create (a new migration adds its own).
const char* const kWardenObjects[] = {
    "jobs", "jobs_claim", "jobs_due", "jobs_running_worker", "jobs_running_lease",
    "jobs_deadline", "jobs_state", "jobs_finished", "jobs_running_ckey", "jobs_live_unique",
    "attempts", "attempts_outcome", "attempts_lost",
    "workers", "workers_live_name",
    "leaders",
    "fenced_writes", "fenced_writes_job",
    "queue_pauses", "api_tokens", "api_tokens_live_name", "audit_log",
    "bulk_ops", "bulk_ops_running",
    "metrics_retired",
    "job_counts", "jobs_crash_loop", "jobs_due_group",
    "queue_limits", "queue_starts",
    "nodes", "workers_node",
};

Result<std::set<std::string>> SchemaNames(Db& db) {
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT name FROM sqlite_master"));
  std::set<std::string> names;
  while (true) {
    WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    names.insert(q.Text(0));
  }
  q.Reset();
  return names;
}

// nullopt: no warden_schema table yet.
Result<std::optional<int>> ReadVersionIfAny(Db& db) {
  WARDEN_ASSIGN_OR_RETURN(auto names, SchemaNames(db));
  if (!names.count("warden_schema")) return std::optional<int>();
  WARDEN_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT max(version) FROM warden_schema"));
  WARDEN_ASSIGN_OR_RETURN(bool row, q.Step());
  const int v = row && !q.IsNull(0) ? static_cast<int>(q.Int(0)) : 0;
  q.Reset();
  return std::optional<int>(v);
}

Status RefuseNewer(int version) {
  if (version <= kSchemaVersion) return Status::Ok();
  return FailedPrecondition("the database has schema version " + std::to_string(version) +
                            ", newer than this warden knows (" + std::to_string(kSchemaVersion) +
                            "): upgrade warden");
}

}  // namespace

Status CheckBeforeUse(Db& db) {
  WARDEN_ASSIGN_OR_RETURN(auto names, SchemaNames(db));
  if (names.count("warden_schema")) {
    WARDEN_ASSIGN_OR_RETURN(std::optional<int> version, ReadVersionIfAny(db));
    return RefuseNewer(version.value_or(0));
  }
  for (const char* name : kWardenObjects) {
    if (names.count(name)) {
      return FailedPrecondition(
          "this is another application's SQLite database: it has a table or index named '" +
          std::string(name) + "' that warden did not create (give warden a file of its own)");
    }
  }
  return Status::Ok();
}

Result<int> ReadSchemaVersion(Db& db) {
  WARDEN_ASSIGN_OR_RETURN(std::optional<int> version, ReadVersionIfAny(db));
  return version.value_or(0);
}

Status Migrate(Db& db) {
  static_assert(kSchemaVersion >= 1);
  WARDEN_ASSIGN_OR_RETURN(std::optional<int> current, ReadVersionIfAny(db));
  if (current && *current == kSchemaVersion) return Status::Ok();
  WARDEN_ASSIGN_OR_RETURN(auto tx, WriteTx::Begin(db));
  WARDEN_RETURN_IF_ERROR(
      db.ExecScript("CREATE TABLE IF NOT EXISTS warden_schema (version INTEGER NOT NULL)"));
  WARDEN_ASSIGN_OR_RETURN(int version, ReadSchemaVersion(db));
  WARDEN_RETURN_IF_ERROR(RefuseNewer(version));
  for (int v = version; v < static_cast<int>(kMigrations.size()); ++v) {
    WARDEN_RETURN_IF_ERROR(db.ExecScript(kMigrations[v]).Annotate(
        "migration " + std::to_string(v + 1)));
    WARDEN_ASSIGN_OR_RETURN(Stmt ins, db.Prepare("INSERT INTO warden_schema VALUES (?)"));
    WARDEN_RETURN_IF_ERROR(ins.Bind(1, v + 1).Exec().status());
  }
  return tx->Commit();
}

}  // namespace warden::sqlite
