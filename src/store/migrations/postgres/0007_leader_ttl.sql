-- How long a maintenance leader's renewal is good for (as on SQLite,
-- schema 5).
ALTER TABLE warden.leaders ADD COLUMN IF NOT EXISTS ttl_ms bigint NOT NULL DEFAULT 0;
