-- What a person needs to see, kept since this version: whether a worker
-- runs command jobs (so that a job nobody can run is named: `warden add`
-- warns, `warden stats` lists it), and a failed command's stdout tail
-- beside its stderr tail (as on SQLite, schema 4).
ALTER TABLE warden.workers ADD COLUMN IF NOT EXISTS allow_commands boolean NOT NULL DEFAULT false;
ALTER TABLE warden.attempts ADD COLUMN IF NOT EXISTS stdout_tail text;
