-- Schema 17: jobs_due_group partial, as SQLite's has been since it came
-- (SQLite schema 11): it holds only scheduled and retryable jobs. Schema 13
-- made it whole, so every claim and every completion (each changes the
-- indexed `state`, so no update is HOT) wrote an entry into it, and a job
-- enqueued to run now, claimed and completed entered it three times.
DROP INDEX IF EXISTS warden.jobs_due_group;
CREATE INDEX jobs_due_group ON warden.jobs (queue, task, (command <> ''), state, run_at)
  WHERE state IN ('scheduled', 'retryable');
