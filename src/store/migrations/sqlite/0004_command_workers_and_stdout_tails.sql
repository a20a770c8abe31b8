-- What a person needs to see, kept since this version: whether a worker
-- runs command jobs (so that a job nobody can run is named: `warden add`
-- warns, `warden stats` lists it), and a failed command's stdout tail
-- beside its stderr tail (a job that reports its error on stdout left
-- nothing to read).
ALTER TABLE workers ADD COLUMN allow_commands INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN stdout_tail TEXT;
