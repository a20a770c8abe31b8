-- A job's usual life (available, running, succeeded) rewrote entries of
-- these two indexes at every step, under the one write lock: they now leave
-- out the states that path passes through and that other indexes cover.
-- Running jobs are found through jobs_running_worker (queries name it), and
-- attempts are only ever counted by outcome for the lost ones.
DROP INDEX jobs_state;
CREATE INDEX jobs_state ON jobs (state, id) WHERE state <> 'running';
DROP INDEX attempts_outcome;
CREATE INDEX attempts_lost ON attempts (job_id) WHERE outcome = 'lost';
