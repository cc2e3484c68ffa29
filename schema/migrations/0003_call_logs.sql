-- Hook stage runs and pre-dispatch refusals/failures on the call path.

CREATE TABLE call_logs (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id    TEXT NOT NULL,
  tool_uid        TEXT NOT NULL,
  request_id      TEXT NOT NULL,
  stage           TEXT NOT NULL CHECK (stage IN ('before', 'after', 'pre_dispatch', 'upstream')),
  channel         TEXT NOT NULL CHECK (channel IN ('active', 'shadow')),
  outcome         TEXT NOT NULL,     -- continue, reject, require_approval, return, fail, error, refused, upstream_error
  code            TEXT,              -- gateway-defined code: isolate error code or refusal code (metadata)
  duration_ms     REAL NOT NULL,
  revision_id     TEXT,
  shadow_differed INTEGER,           -- shadow rows only: 1 when outcome or output differed from active's
  details         TEXT,              -- JSON: hook reason, message, logs, error text; only with payload capture
  created_at      TEXT NOT NULL
);
CREATE INDEX call_logs_by_tool ON call_logs (workspace_id, tool_uid, id);
CREATE INDEX call_logs_by_time ON call_logs (created_at);
