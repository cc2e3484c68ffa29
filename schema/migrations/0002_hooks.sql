-- Hook history: attributed draft versions, test runs, deployment revisions,
-- deployment pointer events and reset events. The mutable state (drafts, etags,
-- pointers, quotas) lives in the workspace Durable Object, not here.

CREATE TABLE hook_versions (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,  -- global order: newest first is seq DESC
  id           TEXT NOT NULL UNIQUE,               -- hv_…
  workspace_id TEXT NOT NULL,
  tool_uid     TEXT NOT NULL,
  source       TEXT NOT NULL,                      -- as stored (formatted when it parsed)
  config       TEXT NOT NULL,                      -- JSON object
  content_hash TEXT NOT NULL,                      -- SHA-256 of canonical { source, config }
  bytes        INTEGER NOT NULL,                   -- charged against the workspace history allowance
  note         TEXT,
  restored_from TEXT,                              -- hv_… this version copies, when made by restore
  actor_id     TEXT NOT NULL,                      -- usr_… or key_…
  actor_kind   TEXT NOT NULL CHECK (actor_kind IN ('user', 'key')),
  channel      TEXT NOT NULL CHECK (channel IN ('browser', 'api', 'cli')),
  created_at   TEXT NOT NULL
);
CREATE INDEX hook_versions_by_tool ON hook_versions (workspace_id, tool_uid, seq);

CREATE TABLE hook_test_runs (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,  -- the latest run per stage decides
  id              TEXT NOT NULL UNIQUE,            -- htr_…
  workspace_id    TEXT NOT NULL,
  tool_uid        TEXT NOT NULL,
  content_hash    TEXT NOT NULL,                   -- the source+config the run executed
  definition_hash TEXT NOT NULL,                   -- the upstream definition it validated against
  stage           TEXT NOT NULL CHECK (stage IN ('before', 'after')),
  outcome         TEXT NOT NULL,
  passed          INTEGER NOT NULL,                -- 1: no isolate error and every schema check held
  error_code      TEXT,
  actor_id        TEXT NOT NULL,
  channel         TEXT NOT NULL,
  created_at      TEXT NOT NULL
);
CREATE INDEX hook_test_runs_by_content ON hook_test_runs (workspace_id, tool_uid, content_hash, definition_hash, seq);

CREATE TABLE hook_revisions (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  id              TEXT NOT NULL UNIQUE,            -- rev_…
  workspace_id    TEXT NOT NULL,
  tool_uid        TEXT NOT NULL,
  version_id      TEXT NOT NULL,
  content_hash    TEXT NOT NULL,
  source_hash     TEXT NOT NULL,
  config          TEXT NOT NULL,                   -- JSON object deployed with the revision
  bundle_key      TEXT NOT NULL,                   -- R2 key of the compiled bundle
  compiled_bytes  INTEGER NOT NULL,
  stages          TEXT NOT NULL,                   -- JSON array: before, after
  contract        TEXT,                            -- JSON publicContract, or NULL
  replaces        TEXT NOT NULL,                   -- JSON { description, inputSchema, outputSchema }
  definition_hash TEXT NOT NULL,                   -- upstream definition compiled against
  created_by      TEXT NOT NULL,
  channel         TEXT NOT NULL,
  created_at      TEXT NOT NULL
);
CREATE INDEX hook_revisions_by_tool ON hook_revisions (workspace_id, tool_uid, seq);

CREATE TABLE hook_deployment_events (
  seq                  INTEGER PRIMARY KEY AUTOINCREMENT,
  id                   TEXT NOT NULL UNIQUE,       -- hde_…
  workspace_id         TEXT NOT NULL,
  tool_uid             TEXT NOT NULL,
  slot                 TEXT NOT NULL CHECK (slot IN ('active', 'shadow')),
  action               TEXT NOT NULL CHECK (action IN ('deploy', 'promote', 'rollback', 'remove')),
  revision_id          TEXT,                       -- NULL for remove
  previous_revision_id TEXT,
  actor_id             TEXT NOT NULL,
  channel              TEXT NOT NULL,
  created_at           TEXT NOT NULL
);
CREATE INDEX hook_deployment_events_by_tool ON hook_deployment_events (workspace_id, tool_uid, seq);

-- Survives the reset it records: nothing else about the tool's hook does.
CREATE TABLE hook_reset_events (
  id                TEXT PRIMARY KEY,              -- hre_…
  workspace_id      TEXT NOT NULL,
  tool_uid          TEXT NOT NULL,
  actor_id          TEXT NOT NULL,
  actor_kind        TEXT NOT NULL,
  channel           TEXT NOT NULL,
  versions_removed  INTEGER NOT NULL,
  revisions_removed INTEGER NOT NULL,
  bundles_removed   INTEGER NOT NULL,
  created_at        TEXT NOT NULL
);
CREATE INDEX hook_reset_events_by_tool ON hook_reset_events (workspace_id, tool_uid, created_at);
