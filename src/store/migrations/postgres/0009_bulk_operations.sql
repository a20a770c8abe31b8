-- Bulk operations (as on SQLite, schema 7).
CREATE TABLE IF NOT EXISTS warden.bulk_ops (
  id               bigserial PRIMARY KEY,
  action           text   NOT NULL,
  filter           text   NOT NULL,
  actor            text   NOT NULL,
  state            text   NOT NULL,
  high_water       bigint NOT NULL,
  cursor           bigint NOT NULL,
  total            bigint NOT NULL,
  done             bigint NOT NULL DEFAULT 0,
  skipped          bigint NOT NULL DEFAULT 0,
  batches          integer NOT NULL DEFAULT 0,
  created_at       bigint NOT NULL,
  finished_at      bigint,
  owner            text,
  lease_expires_at bigint
);
CREATE INDEX IF NOT EXISTS bulk_ops_running ON warden.bulk_ops (id) WHERE state = 'running';
