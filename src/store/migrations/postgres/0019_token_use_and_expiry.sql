-- Schema 19: when each API token was last used and when it expires (as on
-- SQLite, schema 16).
ALTER TABLE warden.api_tokens ADD COLUMN IF NOT EXISTS last_used_at bigint;
ALTER TABLE warden.api_tokens ADD COLUMN IF NOT EXISTS expires_at bigint;
