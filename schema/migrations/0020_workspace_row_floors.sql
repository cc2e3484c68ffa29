-- A workspace's row numbers (`workspace_seq`, migration 0019) were its highest row's plus one, so once retention had
-- deleted all of a workspace's rows the next row was numbered 1 again, and a page cursor held from before (which says
-- "older than N") would have paged into newer rows. Retention now keeps, per workspace and table, the highest number
-- it deleted, and numbering continues above it.
CREATE TABLE workspace_row_floors (
  workspace_id TEXT NOT NULL,
  table_name TEXT NOT NULL CHECK (table_name IN ('calls', 'call_logs')),
  floor INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, table_name)
) WITHOUT ROWID;
