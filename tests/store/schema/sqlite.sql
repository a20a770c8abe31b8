-- index api_tokens_live_name
CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (name) WHERE revoked_at IS NULL;

-- index attempts_lost
CREATE INDEX attempts_lost ON attempts (job_id) WHERE outcome = 'lost';

-- index bulk_ops_running
CREATE INDEX bulk_ops_running ON bulk_ops (id) WHERE state = 'running';

-- index fenced_writes_job
CREATE INDEX fenced_writes_job ON fenced_writes (job_id);

-- index job_actions_job
CREATE INDEX job_actions_job ON job_actions (job_id);

-- index jobs_claim
CREATE INDEX jobs_claim ON jobs (queue, priority DESC, run_at, id) WHERE state = 'available';

-- index jobs_crash_loop
CREATE INDEX jobs_crash_loop ON jobs (id) WHERE last_error = 'crash_loop';

-- index jobs_deadline
CREATE INDEX jobs_deadline ON jobs (start_deadline_at)
  WHERE start_deadline_at IS NOT NULL AND state IN ('scheduled', 'available', 'retryable');

-- index jobs_due
CREATE INDEX jobs_due ON jobs (run_at) WHERE state IN ('scheduled', 'retryable');

-- index jobs_due_group
CREATE INDEX jobs_due_group ON jobs (queue, task, command <> '', state, run_at)
  WHERE state IN ('scheduled', 'retryable');

-- index jobs_finished
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;

-- index jobs_live_unique
CREATE UNIQUE INDEX jobs_live_unique ON jobs (unique_key)
  WHERE unique_key IS NOT NULL AND state IN ('scheduled', 'available', 'running', 'retryable');

-- index jobs_running_ckey
CREATE UNIQUE INDEX jobs_running_ckey ON jobs (concurrency_key)
  WHERE state = 'running' AND concurrency_key IS NOT NULL;

-- index jobs_running_worker
CREATE INDEX jobs_running_worker ON jobs (worker_id) WHERE state = 'running';

-- index jobs_state
CREATE INDEX jobs_state ON jobs (state, id) WHERE state NOT IN ('running', 'available');

-- index workers_live_name
CREATE UNIQUE INDEX workers_live_name ON workers (name) WHERE state IN ('active', 'draining');

-- index workers_node
CREATE INDEX workers_node ON workers (node);

-- table api_tokens
CREATE TABLE api_tokens (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT    NOT NULL,
  scope      TEXT    NOT NULL,
  hash       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
, last_used_at INTEGER, expires_at INTEGER);

-- table attempts
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
  stderr_tail   TEXT, stdout_tail TEXT, lost_by TEXT, runnable_at INTEGER,
  PRIMARY KEY (job_id, attempt)
) WITHOUT ROWID;

-- table audit_log
CREATE TABLE audit_log (
  id     INTEGER PRIMARY KEY AUTOINCREMENT,
  at     INTEGER NOT NULL,
  actor  TEXT    NOT NULL,
  action TEXT    NOT NULL,
  target TEXT    NOT NULL,
  count  INTEGER NOT NULL
);

-- table bulk_ops
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
, fresh INTEGER NOT NULL DEFAULT 0);

-- table fenced_writes
CREATE TABLE fenced_writes (
  id          INTEGER PRIMARY KEY,
  job_id      INTEGER NOT NULL,
  lease_token INTEGER NOT NULL,
  worker_id   INTEGER NOT NULL,
  at          INTEGER NOT NULL,
  what        TEXT    NOT NULL
);

-- table job_actions
CREATE TABLE job_actions (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id       INTEGER NOT NULL,
  at           INTEGER NOT NULL,
  action       TEXT    NOT NULL,
  actor        TEXT    NOT NULL,
  op_id        INTEGER,
  fresh        INTEGER NOT NULL DEFAULT 0,
  from_state   TEXT    NOT NULL,
  finished_at  INTEGER,
  last_error   TEXT,
  charged      INTEGER NOT NULL,
  max_attempts INTEGER NOT NULL,
  crashes      INTEGER NOT NULL,
  max_crashes  INTEGER NOT NULL
);

-- table job_counts
CREATE TABLE job_counts (
  queue   TEXT    NOT NULL,
  state   TEXT    NOT NULL,
  task    TEXT    NOT NULL,
  command INTEGER NOT NULL,
  n       INTEGER NOT NULL,
  PRIMARY KEY (queue, state, task, command)
) WITHOUT ROWID;

-- table jobs
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
, attempt_started_at INTEGER, avoid_node TEXT, avoid_until INTEGER);

-- table leaders
CREATE TABLE leaders (
  name       TEXT PRIMARY KEY,
  holder     INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
, ttl_ms INTEGER NOT NULL DEFAULT 0);

-- table metrics_retired
CREATE TABLE metrics_retired (
  series TEXT PRIMARY KEY,
  value  REAL NOT NULL
) WITHOUT ROWID;

-- table nodes
CREATE TABLE nodes (
  name       TEXT    PRIMARY KEY,
  present    INTEGER NOT NULL,
  enabled    INTEGER NOT NULL,
  capacity   INTEGER,
  updated_at INTEGER NOT NULL,
  removed_at INTEGER
) WITHOUT ROWID;

-- table queue_limits
CREATE TABLE queue_limits (
  queue       TEXT    PRIMARY KEY,
  concurrency INTEGER,
  rate_count  INTEGER,
  rate_ms     INTEGER,
  set_at      INTEGER NOT NULL
) WITHOUT ROWID;

-- table queue_pauses
CREATE TABLE queue_pauses (
  queue     TEXT    PRIMARY KEY,
  paused_at INTEGER NOT NULL
) WITHOUT ROWID;

-- table queue_starts
CREATE TABLE queue_starts (
  queue TEXT    NOT NULL,
  at    INTEGER NOT NULL,
  n     INTEGER NOT NULL,
  PRIMARY KEY (queue, at)
) WITHOUT ROWID;

-- table sqlite_sequence
CREATE TABLE sqlite_sequence(name,seq);

-- table warden_schema
CREATE TABLE warden_schema (version INTEGER NOT NULL);

-- table workers
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
, allow_commands INTEGER NOT NULL DEFAULT 0, metrics TEXT, host TEXT NOT NULL DEFAULT '', keepalive_ms INTEGER NOT NULL DEFAULT 10000);

