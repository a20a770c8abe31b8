-- Three more entries a job's usual life rewrote under the write lock:
-- - jobs_state no longer holds available jobs: jobs_claim has every one.
-- - jobs_running_lease is gone: the sweep's look for expired leases reads
--   the running jobs through jobs_running_worker (as many as the live
--   workers' slots), where the index cost an entry at every claim, every
--   completion and, for each running job, every heartbeat.
-- - An attempt is no longer written at its claim and again at its end: the
--   job row holds the attempt in progress (worker_id, lease_token,
--   started_at, attempt_started_at), and `attempts` gets a row when an
--   attempt ends any other way than in success. A succeeded attempt is the
--   job's last for good (a succeeded job cannot be retried), so the row
--   describes it. AttemptsLocked puts the two together.
DROP INDEX jobs_state;
CREATE INDEX jobs_state ON jobs (state, id) WHERE state NOT IN ('running', 'available');
DROP INDEX jobs_running_lease;
ALTER TABLE jobs ADD COLUMN attempt_started_at INTEGER;
