-- Schema 12: flow control (warden/flow.h). A queue's limits, and the
-- record of its claims for the rate window: one row per claim moment (a
-- batch is one row), pruned by the claims of that queue as the window
-- moves on. Only limited queues have rows; a claim reads queue_limits
-- beside queue_pauses in the one statement it made before.
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
