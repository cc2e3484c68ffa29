-- Issue 29: the `server/discover` result of a service whose upstream speaks MCP 2026-07-28, found at indexing
-- (JSON); NULL for an upstream that speaks only the 2025-era revisions. Calls to it go out in that revision.
ALTER TABLE services ADD COLUMN discover TEXT;

-- Issue 29: task-augmented tool calls passed through to an upstream. The id is the one the client sees (the
-- upstream's task id never leaves the gateway); a task is found only by the workspace and credential that created
-- it. It holds what the `after` stage needs when the result is fetched, and the upstream session the task lives in.
CREATE TABLE gateway_tasks (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  credential TEXT NOT NULL,
  service_id TEXT NOT NULL,
  public_name TEXT NOT NULL,
  upstream_task_id TEXT NOT NULL,
  upstream_session TEXT,
  arguments TEXT NOT NULL,
  upstream_arguments TEXT NOT NULL,
  revision_id TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX gateway_tasks_workspace ON gateway_tasks (workspace_id, expires_at);
