-- Resources, prompts and instructions through the gateway (issue 13, items 4 and 5).

-- The upstream's `initialize` instructions, captured at indexing; at most 4,096 characters (longer ones are cut).
ALTER TABLE services ADD COLUMN instructions TEXT;

-- A profile's access to one service's resources (list, templates, read, their completions) and prompts (list, get,
-- their completions). No row: allowed when the profile's default_mode is 'allow', blocked otherwise.
CREATE TABLE service_policies (
  profile_id   TEXT NOT NULL REFERENCES access_profiles(id),
  service_id   TEXT NOT NULL REFERENCES services(id),
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  resources    TEXT NOT NULL CHECK (resources IN ('allow', 'block')),
  prompts      TEXT NOT NULL CHECK (prompts IN ('allow', 'block')),
  updated_by   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  PRIMARY KEY (profile_id, service_id)
);

-- One resources/read or prompts/get through /mcp: metadata only, never the content or the prompt's arguments.
CREATE TABLE content_logs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id TEXT NOT NULL,
  service_id   TEXT NOT NULL,
  key_id       TEXT NOT NULL,
  request_id   TEXT NOT NULL,
  method       TEXT NOT NULL CHECK (method IN ('resources/read', 'prompts/get')),
  item         TEXT NOT NULL,        -- the upstream resource URI or prompt name, cut to 512 characters
  outcome      TEXT NOT NULL CHECK (outcome IN ('ok', 'blocked', 'upstream_error', 'upstream_failed')),
  code         TEXT,                 -- upstream failure code, or the upstream's JSON-RPC error code
  duration_ms  REAL NOT NULL,
  created_at   TEXT NOT NULL
);
CREATE INDEX content_logs_by_service ON content_logs (workspace_id, service_id, id);
CREATE INDEX content_logs_by_time ON content_logs (created_at);
