-- Issue 29: a task of the 2026-07-28 tasks extension is polled with tasks/get until it ends, and may be polled
-- again after: once the upstream's task has ended, its final state is kept here (JSON: {"status":"completed",
-- "result":…}, {"status":"failed","error":…} or {"status":"cancelled"}, the result as the `after` stage left it)
-- and answered from the row until it expires. NULL while the task runs. `ended_at` is when the gateway saw it end.
ALTER TABLE gateway_tasks ADD COLUMN outcome TEXT;
ALTER TABLE gateway_tasks ADD COLUMN ended_at TEXT;
