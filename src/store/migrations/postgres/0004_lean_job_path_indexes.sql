-- A job's usual life (available, running, succeeded) added entries to
-- these two at every step: each UPDATE that is not HOT indexes the new row
-- version in every index whose condition it meets, and jobs_running_lease
-- made every heartbeat such an UPDATE too. jobs_state now leaves out the
-- states that jobs_claim and jobs_running_worker cover; the sweep's look
-- for expired leases reads the running jobs through jobs_running_worker
-- (as many as the live workers' slots).
DROP INDEX IF EXISTS warden.jobs_state;
CREATE INDEX jobs_state ON warden.jobs (state, id) WHERE state NOT IN ('running', 'available');
DROP INDEX IF EXISTS warden.jobs_running_lease;
