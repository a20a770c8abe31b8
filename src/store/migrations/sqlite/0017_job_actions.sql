-- Schema 17: operators' actions on each job, for its timeline (a bulk
-- operation's audit entry names its filter, not its jobs), each with the
-- job as the action found it (a retry clears how it had ended); deleted
-- with the job. A retry may be fresh (drop the checkpoint), a bulk one too.
CREATE TABLE job_actions (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id       INTEGER NOT NULL,
  at           INTEGER NOT NULL,
  action       TEXT    NOT NULL,
  actor        TEXT    NOT NULL,
  op_id        INTEGER,
  fresh        INTEGER NOT NULL DEFAULT 0,
  from_state   TEXT    NOT NULL,
  finished_at  INTEGER,
  last_error   TEXT,
  charged      INTEGER NOT NULL,
  max_attempts INTEGER NOT NULL,
  crashes      INTEGER NOT NULL,
  max_crashes  INTEGER NOT NULL
);
CREATE INDEX job_actions_job ON job_actions (job_id);
ALTER TABLE bulk_ops ADD COLUMN fresh INTEGER NOT NULL DEFAULT 0;
