-- Every call on the record (issue 28). One `calls` row per tools/call (direct, or a Code Mode inner call),
-- resources/read, prompts/get and run_code, whatever its outcome, written by the queue consumer in batches.
-- Hook stage runs stay rows of `call_logs`, linked by request id. `content_logs` and `code_runs` become call rows.

CREATE TABLE calls (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id    TEXT NOT NULL,
  request_id      TEXT NOT NULL,
  kind            TEXT NOT NULL CHECK (kind IN ('tools/call', 'resources/read', 'prompts/get', 'run_code')),
  -- A Code Mode inner call's 0-based index in its run (whose request id it carries); -1 for any other call.
  call_index      INTEGER NOT NULL,
  created_at      TEXT NOT NULL,     -- when the call started (ISO 8601, UTC)
  actor           TEXT NOT NULL,     -- `key:<key id>` or `oauth:<client_id>`
  key_id          TEXT NOT NULL,     -- the key id, or `oauth:<client_id>` for a grant
  granted_by      TEXT,              -- an OAuth caller: the user whose grant (to this client, for this workspace) it holds
  profile_id      TEXT,
  service_id      TEXT,
  tool_uid        TEXT,              -- NULL for a name that matches no tool, content and run_code
  name            TEXT NOT NULL,     -- the public name called (tool, prompt, or the gateway resource URI), cut to 512 characters
  item            TEXT,              -- content only: the upstream URI or prompt name (shown like details)
  outcome         TEXT NOT NULL,
  code            TEXT,
  duration_ms     REAL NOT NULL,
  gateway_ms      REAL NOT NULL,
  hooks_ms        REAL NOT NULL,
  upstream_ms     REAL NOT NULL,
  duration_bucket INTEGER NOT NULL,  -- the histogram bucket of duration_ms (worker/logs/histogram.ts)
  bytes_in        INTEGER NOT NULL,
  bytes_out       INTEGER NOT NULL,
  revision_id     TEXT,              -- the active revision that ran
  shadow          TEXT,              -- a shadow revision's verdict: same, differed or not_run; NULL without one
  inner_calls     INTEGER,           -- run_code: tool calls the program made
  program_sha256  TEXT,              -- run_code: the program's digest (its text is never stored)
  program_bytes   INTEGER
);
-- Idempotency: a redelivered message inserts nothing (INSERT … ON CONFLICT DO NOTHING).
CREATE UNIQUE INDEX calls_once ON calls (workspace_id, request_id, kind, call_index);
CREATE INDEX calls_by_workspace ON calls (workspace_id, id);
CREATE INDEX calls_by_tool ON calls (workspace_id, tool_uid, id);
CREATE INDEX calls_by_time ON calls (created_at);

-- The rows of the two older per-kind tables, as call rows (durations all gateway time, bytes unknown: 0), copied
-- before the rollup trigger exists: rollups start with this migration rather than guess old histograms.
INSERT INTO calls (workspace_id, request_id, kind, call_index, created_at, actor, key_id, service_id, name, item, outcome,
                   code, duration_ms, gateway_ms, hooks_ms, upstream_ms, duration_bucket, bytes_in, bytes_out)
SELECT workspace_id, request_id, method, -1, created_at, COALESCE(actor, 'key:' || key_id), key_id, service_id, item, item,
       CASE outcome WHEN 'blocked' THEN 'hidden' ELSE outcome END, code, duration_ms, duration_ms, 0, 0, 0, 0, 0
FROM content_logs WHERE true
ON CONFLICT DO NOTHING;
INSERT INTO calls (workspace_id, request_id, kind, call_index, created_at, actor, key_id, name, outcome, code, duration_ms,
                   gateway_ms, hooks_ms, upstream_ms, duration_bucket, bytes_in, bytes_out, inner_calls, program_sha256,
                   program_bytes)
SELECT workspace_id, request_id, 'run_code', -1, created_at, actor, key_id, 'run_code', outcome, code, duration_ms,
       duration_ms, 0, 0, 0, 0, 0, inner_calls, program_sha256, program_bytes
FROM code_runs WHERE true
ON CONFLICT DO NOTHING;
DROP TABLE content_logs;
DROP TABLE code_runs;

-- Per-minute rollups per workspace, kind, tool, actor, outcome and duration bucket: charts and the overview read
-- these, never the rows. Kept by a trigger, so only a row really inserted counts: a redelivered batch adds nothing.
CREATE TABLE call_rollups (
  workspace_id TEXT NOT NULL,
  minute       INTEGER NOT NULL,  -- Unix time / 60, floored
  kind         TEXT NOT NULL,
  tool_uid     TEXT NOT NULL,     -- '' for no tool
  actor        TEXT NOT NULL,
  outcome      TEXT NOT NULL,
  bucket       INTEGER NOT NULL,
  calls        INTEGER NOT NULL,
  duration_ms  REAL NOT NULL,
  bytes_in     INTEGER NOT NULL,
  bytes_out    INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, minute, kind, tool_uid, actor, outcome, bucket)
) WITHOUT ROWID;
CREATE INDEX call_rollups_by_minute ON call_rollups (minute);

CREATE TRIGGER calls_rollup AFTER INSERT ON calls
BEGIN
  INSERT INTO call_rollups (workspace_id, minute, kind, tool_uid, actor, outcome, bucket, calls, duration_ms, bytes_in, bytes_out)
  VALUES (NEW.workspace_id, CAST(strftime('%s', NEW.created_at) AS INTEGER) / 60, NEW.kind, COALESCE(NEW.tool_uid, ''),
          NEW.actor, NEW.outcome, NEW.duration_bucket, 1, NEW.duration_ms, NEW.bytes_in, NEW.bytes_out)
  ON CONFLICT (workspace_id, minute, kind, tool_uid, actor, outcome, bucket) DO UPDATE SET
    calls = calls + 1,
    duration_ms = duration_ms + excluded.duration_ms,
    bytes_in = bytes_in + excluded.bytes_in,
    bytes_out = bytes_out + excluded.bytes_out;
END;

-- Stage rows: their place in their call's message, so a redelivered one inserts nothing. NULL on older rows.
ALTER TABLE call_logs ADD COLUMN row_seq INTEGER;
-- Captured detail bytes the row counted against the workspace's allowance (0: none, or the allowance was spent).
ALTER TABLE call_logs ADD COLUMN detail_bytes INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX call_logs_once ON call_logs (workspace_id, request_id, COALESCE(call_index, -1), row_seq) WHERE row_seq IS NOT NULL;
CREATE INDEX call_logs_by_request ON call_logs (workspace_id, request_id);

-- The allowance counts bytes as rows really land, for the same reason as the rollups.
CREATE TRIGGER call_logs_detail_usage AFTER INSERT ON call_logs WHEN NEW.detail_bytes > 0
BEGIN
  INSERT INTO log_detail_usage (workspace_id, hour, bytes)
  VALUES (NEW.workspace_id, CAST(strftime('%s', NEW.created_at) AS INTEGER) / 3600, NEW.detail_bytes)
  ON CONFLICT (workspace_id, hour) DO UPDATE SET bytes = bytes + excluded.bytes;
END;

-- Call log messages the gateway could not hand to the queue, per workspace and minute (GET …/metrics `lost`).
CREATE TABLE call_log_losses (
  workspace_id TEXT NOT NULL,
  minute       INTEGER NOT NULL,
  lost         INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, minute)
) WITHOUT ROWID;
