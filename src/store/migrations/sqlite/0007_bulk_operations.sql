-- Bulk operations (warden/bulk.h): each batch moves `cursor` down in its
-- own transaction, so a restart resumes where the last commit left off;
-- `owner` and `lease_expires_at` say which process runs it now.
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
