-- Metrics: each worker's snapshot of what it counted (core/metrics.h), and
-- the totals of the rows Prune deleted, so that the sums never go down.
ALTER TABLE workers ADD COLUMN metrics TEXT;
CREATE TABLE metrics_retired (
  series TEXT PRIMARY KEY,
  value  REAL NOT NULL
) WITHOUT ROWID;
