-- Metrics (as on SQLite, schema 8): each worker's snapshot of what it counted
-- (core/metrics.h), and the totals of the rows Prune deleted.
ALTER TABLE warden.workers ADD COLUMN IF NOT EXISTS metrics jsonb;
CREATE TABLE IF NOT EXISTS warden.metrics_retired (
  series text             PRIMARY KEY,
  value  double precision NOT NULL
);
