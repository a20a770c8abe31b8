-- What the PostgreSQL server alone charges to insert one job row: warden's
-- row (the values pg_store.cc inserts, into warden.jobs with all its
-- indexes) against the ceiling's (bench/ceiling_pg.cc: 4 columns, one
-- index). 200,000 rows made by the server in one INSERT ... SELECT, rolled
-- back: no client, no parameters, no commit. Alternates the two 5 times;
-- divide each time by 200,000.
--
--   build/bench/warden_bench bulk --db URL --jobs 1000   (creates warden.jobs)
--   psql URL -X -f bench/pg_row_insert_cost.sql | grep Time
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS row_cost CASCADE;
CREATE SCHEMA row_cost;
CREATE TABLE row_cost.jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  state smallint NOT NULL, lease_token bigint NOT NULL DEFAULT 0, payload json NOT NULL);
CREATE INDEX jobs_available ON row_cost.jobs (id) WHERE state = 0;
\timing on
\echo ceiling row
BEGIN; INSERT INTO row_cost.jobs (state, payload) SELECT 0, '{}'::json FROM generate_series(1, 200000); ROLLBACK;
\echo warden row
BEGIN; INSERT INTO warden.jobs (queue, task, command, payload, priority, state, run_at,
  max_attempts, max_crashes, retry, delivery, timeout_ms, created_at)
  SELECT 'default', 'noop', '', '{}'::json, 0, 'available', 1795419938597 + i, 5, 3,
  'default', 'at_least_once', 1800000, 1795419938597 FROM generate_series(1, 200000) i;
ROLLBACK;
\echo ceiling row
BEGIN; INSERT INTO row_cost.jobs (state, payload) SELECT 0, '{}'::json FROM generate_series(1, 200000); ROLLBACK;
\echo warden row
BEGIN; INSERT INTO warden.jobs (queue, task, command, payload, priority, state, run_at,
  max_attempts, max_crashes, retry, delivery, timeout_ms, created_at)
  SELECT 'default', 'noop', '', '{}'::json, 0, 'available', 1795419938597 + i, 5, 3,
  'default', 'at_least_once', 1800000, 1795419938597 FROM generate_series(1, 200000) i;
ROLLBACK;
\echo ceiling row
BEGIN; INSERT INTO row_cost.jobs (state, payload) SELECT 0, '{}'::json FROM generate_series(1, 200000); ROLLBACK;
\echo warden row
BEGIN; INSERT INTO warden.jobs (queue, task, command, payload, priority, state, run_at,
  max_attempts, max_crashes, retry, delivery, timeout_ms, created_at)
  SELECT 'default', 'noop', '', '{}'::json, 0, 'available', 1795419938597 + i, 5, 3,
  'default', 'at_least_once', 1800000, 1795419938597 FROM generate_series(1, 200000) i;
ROLLBACK;
\echo ceiling row
BEGIN; INSERT INTO row_cost.jobs (state, payload) SELECT 0, '{}'::json FROM generate_series(1, 200000); ROLLBACK;
\echo warden row
BEGIN; INSERT INTO warden.jobs (queue, task, command, payload, priority, state, run_at,
  max_attempts, max_crashes, retry, delivery, timeout_ms, created_at)
  SELECT 'default', 'noop', '', '{}'::json, 0, 'available', 1795419938597 + i, 5, 3,
  'default', 'at_least_once', 1800000, 1795419938597 FROM generate_series(1, 200000) i;
ROLLBACK;
\echo ceiling row
BEGIN; INSERT INTO row_cost.jobs (state, payload) SELECT 0, '{}'::json FROM generate_series(1, 200000); ROLLBACK;
\echo warden row
BEGIN; INSERT INTO warden.jobs (queue, task, command, payload, priority, state, run_at,
  max_attempts, max_crashes, retry, delivery, timeout_ms, created_at)
  SELECT 'default', 'noop', '', '{}'::json, 0, 'available', 1795419938597 + i, 5, 3,
  'default', 'at_least_once', 1800000, 1795419938597 FROM generate_series(1, 200000) i;
ROLLBACK;
\timing off
DROP SCHEMA row_cost CASCADE;
