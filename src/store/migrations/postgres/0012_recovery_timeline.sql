-- A job's recovery timeline (as on SQLite, schema 10).
ALTER TABLE warden.attempts ADD COLUMN IF NOT EXISTS lost_by text;
ALTER TABLE warden.attempts ADD COLUMN IF NOT EXISTS runnable_at bigint;
CREATE INDEX IF NOT EXISTS fenced_writes_job ON warden.fenced_writes (job_id);
