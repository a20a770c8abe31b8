-- Schema 16: a job lost or crashed on a node is kept from that node until
-- avoid_until (as on SQLite, schema 14).
ALTER TABLE warden.jobs ADD COLUMN IF NOT EXISTS avoid_node text;
ALTER TABLE warden.jobs ADD COLUMN IF NOT EXISTS avoid_until bigint;
