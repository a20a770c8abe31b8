-- Schema 11: the jobs by queue and state, kept as jobs change, so that
-- `/metrics`, `warden queues` and the stats add up a few rows instead of
-- counting every job (issue 20). Not one counter row that every completing
-- transaction updates: that row would serialise the completions of every
-- worker host (each waits for the last one's commit). Instead each
-- statement that changes jobs appends its net change per (queue, state) to
-- job_count_deltas, from statement-level triggers over its transition
-- tables: one short INSERT per statement, no row ever updated, so
-- concurrent statements never wait for each other. A reader adds
-- job_counts and the deltas up in one snapshot (exact at that snapshot);
-- JobCountsFold moves the deltas into job_counts (the maintenance leader
-- each pass, and readers), under a try-lock so that folders never wait.
-- The counts start from the rows already there: the triggers are created
-- first (each takes a lock that waits for writers of jobs in flight and
-- keeps new ones out until the migration commits), then the jobs counted.
-- jobs_crash_loop holds only quarantined jobs (none on the job path): the
-- stats count them without reading every job.
CREATE TABLE IF NOT EXISTS warden.job_counts (
  queue text   NOT NULL,
  state text   NOT NULL,
  n     bigint NOT NULL,
  PRIMARY KEY (queue, state)
);
CREATE TABLE IF NOT EXISTS warden.job_count_deltas (
  queue text   NOT NULL,
  state text   NOT NULL,
  n     bigint NOT NULL
);
CREATE OR REPLACE FUNCTION warden.job_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO warden.job_count_deltas (queue, state, n)
    SELECT queue, state, count(*) FROM new_jobs GROUP BY queue, state;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION warden.job_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO warden.job_count_deltas (queue, state, n)
    SELECT queue, state, -count(*) FROM old_jobs GROUP BY queue, state;
  RETURN NULL;
END $$;
-- Most UPDATEs of jobs change no state (heartbeats, checkpoints): their net
-- change is none and nothing is written.
CREATE OR REPLACE FUNCTION warden.job_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO warden.job_count_deltas (queue, state, n)
    SELECT queue, state, sum(d) FROM (
      SELECT queue, state, 1 AS d FROM new_jobs
      UNION ALL SELECT queue, state, -1 FROM old_jobs) c
    GROUP BY queue, state HAVING sum(d) <> 0;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION warden.job_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM warden.job_count_deltas;
  DELETE FROM warden.job_counts;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS jobs_count_insert ON warden.jobs;
DROP TRIGGER IF EXISTS jobs_count_delete ON warden.jobs;
DROP TRIGGER IF EXISTS jobs_count_update ON warden.jobs;
DROP TRIGGER IF EXISTS jobs_count_truncate ON warden.jobs;
CREATE TRIGGER jobs_count_insert AFTER INSERT ON warden.jobs
  REFERENCING NEW TABLE AS new_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION warden.job_counts_inserted();
CREATE TRIGGER jobs_count_delete AFTER DELETE ON warden.jobs
  REFERENCING OLD TABLE AS old_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION warden.job_counts_deleted();
CREATE TRIGGER jobs_count_update AFTER UPDATE ON warden.jobs
  REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION warden.job_counts_updated();
CREATE TRIGGER jobs_count_truncate AFTER TRUNCATE ON warden.jobs
  FOR EACH STATEMENT EXECUTE FUNCTION warden.job_counts_truncated();
DELETE FROM warden.job_count_deltas;
DELETE FROM warden.job_counts;
INSERT INTO warden.job_counts (queue, state, n)
  SELECT queue, state, count(*) FROM warden.jobs GROUP BY queue, state;
CREATE INDEX IF NOT EXISTS jobs_crash_loop ON warden.jobs (id) WHERE last_error = 'crash_loop';
