-- Schema 15: the node registry (as on SQLite, schema 13). A claim by a
-- worker on a node with a capacity locks the node's row FOR UPDATE, so
-- the claims of one node take turns and each counts what the one before
-- it committed.
CREATE TABLE IF NOT EXISTS warden.nodes (
  name       text    PRIMARY KEY,
  present    boolean NOT NULL,
  enabled    boolean NOT NULL,
  capacity   bigint,
  updated_at bigint  NOT NULL,
  removed_at bigint
);
CREATE INDEX IF NOT EXISTS workers_node ON warden.workers (node);
ALTER TABLE warden.workers ADD COLUMN IF NOT EXISTS host text NOT NULL DEFAULT '';
