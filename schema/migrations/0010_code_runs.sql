-- One run_code through /mcp: who ran it, how it ended, how many tool calls it made and how long it took. Never the
-- program's text or its result: the SHA-256 and size of the program tell runs of the same program apart. Its inner
-- calls are logged under each tool, with this row's request id.
CREATE TABLE code_runs (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id   TEXT NOT NULL,
  key_id         TEXT NOT NULL,
  actor          TEXT NOT NULL,
  request_id     TEXT NOT NULL,
  outcome        TEXT NOT NULL CHECK (outcome IN ('ok', 'error')),
  code           TEXT,              -- the run's error code (a Code Mode code, or an uncaught inner call's code)
  inner_calls    INTEGER NOT NULL,
  program_sha256 TEXT,              -- null when the arguments held no program
  program_bytes  INTEGER,
  duration_ms    REAL NOT NULL,
  created_at     TEXT NOT NULL
);
CREATE INDEX code_runs_by_workspace ON code_runs (workspace_id, id);
CREATE INDEX code_runs_by_time ON code_runs (created_at);
