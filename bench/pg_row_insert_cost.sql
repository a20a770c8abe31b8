-- What the PostgreSQL server alone charges to insert one job row: warden's
-- row (the values pg_store.cc inserts, into warden.jobs with all its
-- indexes) against the ceiling's (bench/ceiling_pg.cc: 4 columns, one
-- index). 200,000 rows made by the server in one INSERT ... SELECT, then
-- rolled back (a subtransaction): no client, no parameters, no commit. The
-- two alternate 5 times; prints each one's median, in µs a row.
--
--   build/bench/warden_bench bulk --db URL --jobs 1000   (creates warden.jobs)
--   psql URL -X -q -f bench/pg_row_insert_cost.sql
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS row_cost CASCADE;
CREATE SCHEMA row_cost;
CREATE TABLE row_cost.jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  state smallint NOT NULL, lease_token bigint NOT NULL DEFAULT 0, payload json NOT NULL);
CREATE INDEX jobs_available ON row_cost.jobs (id) WHERE state = 0;

SET client_min_messages = notice;
DO $$
DECLARE
  rows constant int := 200000;
  t0 timestamptz;
  ceiling_us float8[] := '{}';
  warden_us float8[] := '{}';
BEGIN
  FOR run IN 1..5 LOOP
    BEGIN
      t0 := clock_timestamp();
      INSERT INTO row_cost.jobs (state, payload)
        SELECT 0, '{}'::json FROM generate_series(1, rows);
      ceiling_us := ceiling_us || extract(epoch FROM clock_timestamp() - t0) * 1e6 / rows;
      t0 := clock_timestamp();
      INSERT INTO warden.jobs (queue, task, command, payload, priority, state, run_at,
                               max_attempts, max_crashes, retry, delivery, timeout_ms,
                               created_at)
        SELECT 'default', 'noop', '', '{}'::json, 0, 'available', 1795419938597 + i, 5, 3,
               'default', 'at_least_once', 1800000, 1795419938597
        FROM generate_series(1, rows) i;
      warden_us := warden_us || extract(epoch FROM clock_timestamp() - t0) * 1e6 / rows;
      RAISE EXCEPTION USING ERRCODE = 'WR001';  -- rolls both inserts back
    EXCEPTION WHEN SQLSTATE 'WR001' THEN
      NULL;
    END;
  END LOOP;
  RAISE NOTICE 'ceiling row: % µs (runs: %)',
    round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY u) FROM unnest(ceiling_us) u)
          ::numeric, 2), ceiling_us::numeric(6, 2)[];
  RAISE NOTICE 'warden row:  % µs (runs: %)',
    round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY u) FROM unnest(warden_us) u)
          ::numeric, 2), warden_us::numeric(6, 2)[];
END $$;

SET client_min_messages = warning;
DROP SCHEMA row_cost CASCADE;
