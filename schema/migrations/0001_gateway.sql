-- Tenants, identities, upstream services, their indexed tools and access policy.

CREATE TABLE workspaces (
  id            TEXT PRIMARY KEY,               -- ws_…
  name          TEXT NOT NULL,
  detail_policy TEXT NOT NULL DEFAULT 'metadata' CHECK (detail_policy IN ('metadata', 'payloads')),
  created_at    TEXT NOT NULL
);

CREATE TABLE users (
  id         TEXT PRIMARY KEY,                  -- usr_…
  email      TEXT NOT NULL UNIQUE COLLATE NOCASE,
  created_at TEXT NOT NULL
);

CREATE TABLE memberships (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  user_id      TEXT NOT NULL REFERENCES users(id),
  role         TEXT NOT NULL CHECK (role IN ('admin', 'editor', 'viewer')),
  created_at   TEXT NOT NULL,
  PRIMARY KEY (workspace_id, user_id)
);

CREATE TABLE access_profiles (
  id           TEXT PRIMARY KEY,                -- prof_…
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name         TEXT NOT NULL,
  default_mode TEXT NOT NULL DEFAULT 'allow' CHECK (default_mode IN ('allow', 'block', 'approval')),
  created_at   TEXT NOT NULL,
  UNIQUE (workspace_id, name)
);

CREATE TABLE api_keys (
  id           TEXT PRIMARY KEY,                -- key_…
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name         TEXT NOT NULL,
  key_hash     TEXT NOT NULL UNIQUE,            -- hex SHA-256 of the whole rr_… secret
  prefix       TEXT NOT NULL,                   -- first characters, shown so people can tell keys apart
  scopes       TEXT NOT NULL,                   -- JSON array of scopes
  profile_id   TEXT REFERENCES access_profiles(id),
  created_by   TEXT NOT NULL,                   -- actor id (usr_… or key_…) or 'bootstrap'
  created_at   TEXT NOT NULL,
  revoked_at   TEXT
);
CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id, created_at);

CREATE TABLE services (
  id                  TEXT PRIMARY KEY,         -- svc_…
  workspace_id        TEXT NOT NULL REFERENCES workspaces(id),
  slug                TEXT NOT NULL,            -- immutable; prefixes public tool names
  url                 TEXT NOT NULL,
  secret_headers      TEXT,                     -- AES-GCM envelope, never returned
  secret_header_names TEXT NOT NULL DEFAULT '[]',
  requires_authorization INTEGER NOT NULL DEFAULT 0,
  payload_capture     INTEGER NOT NULL DEFAULT 0,
  server_info         TEXT,                     -- JSON from initialize
  indexed_at          TEXT,
  created_at          TEXT NOT NULL,
  deleted_at          TEXT
);
CREATE UNIQUE INDEX services_live_slug ON services (workspace_id, slug) WHERE deleted_at IS NULL;

CREATE TABLE tools (
  uid                 TEXT PRIMARY KEY,         -- tool_…, immutable
  workspace_id        TEXT NOT NULL REFERENCES workspaces(id),
  service_id          TEXT NOT NULL REFERENCES services(id),
  name                TEXT NOT NULL,            -- upstream name
  definition          TEXT NOT NULL,            -- JSON: name, description, inputSchema, outputSchema, annotations
  definition_hash     TEXT NOT NULL,
  approved_hash       TEXT,                     -- last definition an admin (or first indexing) accepted
  previous_definition TEXT,                     -- the approved definition a pending review replaces
  status              TEXT NOT NULL CHECK (status IN ('active', 'review_required', 'removed')),
  projection          TEXT,                     -- JSON array of top-level fields returned to clients, or NULL
  first_seen_at       TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  UNIQUE (service_id, name)
);
CREATE INDEX tools_by_workspace ON tools (workspace_id, service_id, name);

CREATE TABLE tool_policies (
  profile_id   TEXT NOT NULL REFERENCES access_profiles(id),
  tool_uid     TEXT NOT NULL REFERENCES tools(uid),
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  mode         TEXT NOT NULL CHECK (mode IN ('allow', 'block', 'approval')),
  updated_by   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  PRIMARY KEY (profile_id, tool_uid)
);
