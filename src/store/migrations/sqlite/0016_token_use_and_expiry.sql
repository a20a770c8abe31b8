-- Schema 16: when each API token was last used (written at most once a
-- minute per token, not on every request) and when it expires (NULL:
-- never; a token past it is refused as expired). Tokens from before it
-- read as never used since and never expiring, as they were made.
ALTER TABLE api_tokens ADD COLUMN last_used_at INTEGER;
ALTER TABLE api_tokens ADD COLUMN expires_at INTEGER;
