-- Schema 14: a job lost or crashed on a node is kept from that node until
-- avoid_until, when another node can take it (core/node_preference.h).
-- Claims read the job row anyway (its task, command and keys): no index.
ALTER TABLE jobs ADD COLUMN avoid_node TEXT;
ALTER TABLE jobs ADD COLUMN avoid_until INTEGER;
