-- Times are ms since the epoch (UTC). States and kinds are docs/design.md's
-- names.
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
