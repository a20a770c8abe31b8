-- Schema 9: the jobs by queue and state, kept exact by the statements that
-- change jobs (store/sqlite/job_counts.h), so that `/metrics`, `warden
-- queues` and the stats read a row per queue and state instead of counting
-- every job (issue 20: 0.6 s a scrape at a million jobs). Each statement
-- that changes jobs adds its net change per (queue, state) in its own
-- transaction, so a reader sees exactly the committed jobs. Not triggers:
-- a row trigger ran its program for every job of every claim and
-- completion under the one write lock (measured: +1.4 us a transition with
-- a WHEN that skipped them, +3.4 us without), where a statement's upserts
-- cost the same for a batch of one or of 500. Rows that fall to 0 stay;
-- readers skip them. The counts start from the rows already there, in the
-- migration's transaction (Migrate runs every migration in one).
-- jobs_crash_loop holds only quarantined jobs (none on the job path): the
-- stats count them without reading every job.
CREATE TABLE IF NOT EXISTS job_counts (
  queue TEXT    NOT NULL,
  state TEXT    NOT NULL,
  n     INTEGER NOT NULL,
  PRIMARY KEY (queue, state)
) WITHOUT ROWID;
DELETE FROM job_counts;
INSERT INTO job_counts (queue, state, n) SELECT queue, state, count(*) FROM jobs GROUP BY queue, state;
CREATE INDEX IF NOT EXISTS jobs_crash_loop ON jobs (id) WHERE last_error = 'crash_loop';
