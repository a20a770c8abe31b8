-- Schema 14: flow control (as on SQLite, schema 12). A claim of a limited
-- queue locks its queue_limits row FOR UPDATE, so claims of one limited
-- queue take turns and each counts what the one before committed; claims
-- of other queues never touch these tables (the one-statement claim only
-- looks for a row of the queues it picked).
CREATE TABLE IF NOT EXISTS warden.queue_limits (
  queue       text   PRIMARY KEY,
  concurrency bigint,
  rate_count  bigint,
  rate_ms     bigint,
  set_at      bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS warden.queue_starts (
  queue text   NOT NULL,
  at    bigint NOT NULL,
  n     bigint NOT NULL,
  PRIMARY KEY (queue, at)
);
