-- Schema 18: each worker's keepalive threshold (as on SQLite, schema 15),
-- so that every surface can show a silent worker as silent.
ALTER TABLE warden.workers ADD COLUMN IF NOT EXISTS keepalive_ms bigint NOT NULL DEFAULT 10000;
