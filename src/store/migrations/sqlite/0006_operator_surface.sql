-- The operator surface: paused queues (the claim skips them), API tokens
-- (only a hash of each secret), and the audit log of operator actions.
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
