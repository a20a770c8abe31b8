-- Schema 13: the node registry (warden/nodes.h). A removed node keeps its
-- row (present = 0) so that its workers are known to be on a removed node;
-- workers_node finds a node's workers for its capacity and `nodes ls`. A
-- worker's node may now be a name it is given (`--node`), so its host name
-- gets a column of its own: deaths are proven by host ('' in older rows,
-- whose node is their host).
CREATE TABLE IF NOT EXISTS nodes (
  name       TEXT    PRIMARY KEY,
  present    INTEGER NOT NULL,
  enabled    INTEGER NOT NULL,
  capacity   INTEGER,
  updated_at INTEGER NOT NULL,
  removed_at INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS workers_node ON workers (node);
ALTER TABLE workers ADD COLUMN host TEXT NOT NULL DEFAULT '';
