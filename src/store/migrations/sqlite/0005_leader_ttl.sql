-- How long a maintenance leader's renewal is good for, as the leader set
-- it: the other workers judge its silence by watching the row stay
-- unchanged that long (core/silence.h), whatever their own settings.
ALTER TABLE leaders ADD COLUMN ttl_ms INTEGER NOT NULL DEFAULT 0;
