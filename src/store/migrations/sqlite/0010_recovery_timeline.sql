-- A job's recovery timeline: how each lost attempt's loss was found, when
-- the job could run again, and its writes that fencing refused (read by job).
ALTER TABLE attempts ADD COLUMN lost_by TEXT;
ALTER TABLE attempts ADD COLUMN runnable_at INTEGER;
CREATE INDEX fenced_writes_job ON fenced_writes (job_id);
