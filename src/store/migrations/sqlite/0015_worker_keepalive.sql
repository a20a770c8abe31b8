-- Schema 15: each worker's keepalive threshold, so that every surface can
-- show a worker whose heartbeat went unrenewed past it as silent (a
-- display: verdicts still come from watching, core/silence.h). Rows from
-- before it read as 10 s, the default every worker had.
ALTER TABLE workers ADD COLUMN keepalive_ms INTEGER NOT NULL DEFAULT 10000;
