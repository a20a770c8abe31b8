-- The operator surface (as on SQLite, schema 6): paused queues (the claim
-- skips them), API tokens (only a hash of each secret), and the audit log
-- of operator actions.
CREATE TABLE IF NOT EXISTS warden.queue_pauses (
  queue     text   PRIMARY KEY,
  paused_at bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS warden.api_tokens (
  id         bigserial PRIMARY KEY,
  name       text   NOT NULL,
  scope      text   NOT NULL,
  hash       text   NOT NULL,
  created_at bigint NOT NULL,
  revoked_at bigint
);
CREATE UNIQUE INDEX IF NOT EXISTS api_tokens_live_name ON warden.api_tokens (name) WHERE revoked_at IS NULL;
CREATE TABLE IF NOT EXISTS warden.audit_log (
  id     bigserial PRIMARY KEY,
  at     bigint NOT NULL,
  actor  text   NOT NULL,
  action text   NOT NULL,
  target text   NOT NULL,
  count  bigint NOT NULL
);
