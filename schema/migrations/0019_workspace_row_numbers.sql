-- The logs API showed `calls.id` and `call_logs.id`, AUTOINCREMENT ids shared by every workspace, as row ids and in
-- page cursors: the gap between two of a workspace's rows counted the other tenants' calls in between. Each row now
-- also has a number within its workspace (`workspace_seq`: 1, 2, 3, … in the order rows land; a redelivered row
-- skipped leaves a gap), which is all the API shows and pages by. The global ids stay, internal only.

ALTER TABLE calls ADD COLUMN workspace_seq INTEGER;
UPDATE calls SET workspace_seq = numbered.n
FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY workspace_id ORDER BY id) AS n FROM calls) AS numbered
WHERE calls.id = numbered.id;
-- Unique: a row numbered from a stale maximum fails its batch (which the queue retries), never replaces a row.
CREATE UNIQUE INDEX calls_by_workspace_seq ON calls (workspace_id, workspace_seq);
DROP INDEX calls_by_workspace;
DROP INDEX calls_by_tool;
CREATE INDEX calls_by_tool ON calls (workspace_id, tool_uid, workspace_seq);

ALTER TABLE call_logs ADD COLUMN workspace_seq INTEGER;
UPDATE call_logs SET workspace_seq = numbered.n
FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY workspace_id ORDER BY id) AS n FROM call_logs) AS numbered
WHERE call_logs.id = numbered.id;
CREATE UNIQUE INDEX call_logs_by_workspace_seq ON call_logs (workspace_id, workspace_seq);
DROP INDEX call_logs_by_tool;
CREATE INDEX call_logs_by_tool ON call_logs (workspace_id, tool_uid, workspace_seq);
