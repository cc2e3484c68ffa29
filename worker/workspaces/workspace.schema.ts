import type { Migration } from "../lib/sqlite-migrations.ts";

/**
 * The workspace Durable Object's SQLite schema, as ordered migrations
 * (schema/STORAGE.md describes each table). The table modules
 * (drafts.do.ts, deployments.do.ts, quotas.do.ts, approvals.do.ts) only read
 * and write; every change to the layout is a new step at the end of this list.
 */
export const WORKSPACE_MIGRATIONS: readonly Migration[] = [
  // 1: the tables as they were when each module still created its own. They
  // are all `IF NOT EXISTS`, so objects that already have them upgrade in place.
  [
    `CREATE TABLE IF NOT EXISTS hook_drafts (
      tool_uid     TEXT PRIMARY KEY,
      source       TEXT NOT NULL,
      config       TEXT NOT NULL,
      content_hash TEXT NOT NULL,
      version_id   TEXT NOT NULL,
      updated_at   TEXT NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS hook_deployments (
      tool_uid        TEXT NOT NULL,
      slot            TEXT NOT NULL CHECK (slot IN ('active', 'shadow')),
      revision_id     TEXT NOT NULL,
      version_id      TEXT NOT NULL,
      bundle_key      TEXT NOT NULL,
      bundle_bytes    INTEGER NOT NULL,
      stages          TEXT NOT NULL,
      contract        TEXT,
      config          TEXT NOT NULL,
      definition_hash TEXT NOT NULL,
      deployed_by     TEXT NOT NULL,
      deployed_at     TEXT NOT NULL,
      PRIMARY KEY (tool_uid, slot)
    )`,
    `CREATE TABLE IF NOT EXISTS quota_events (
      id      INTEGER PRIMARY KEY AUTOINCREMENT,
      quota   TEXT NOT NULL,
      subject TEXT NOT NULL,   -- workspace for saves, actor id for compiles
      at      INTEGER NOT NULL -- epoch ms
    )`,
    "CREATE INDEX IF NOT EXISTS quota_events_window ON quota_events (quota, subject, at)",
    `CREATE TABLE IF NOT EXISTS hook_history_usage (
      tool_uid TEXT PRIMARY KEY,
      bytes    INTEGER NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS approvals (
      id          TEXT PRIMARY KEY,
      tool_uid    TEXT NOT NULL,
      public_name TEXT NOT NULL,
      key_id      TEXT NOT NULL,
      revision_id TEXT,
      call_hash   TEXT NOT NULL,
      arguments   TEXT NOT NULL,
      reason      TEXT NOT NULL,
      source      TEXT NOT NULL,
      status      TEXT NOT NULL,
      created_at  INTEGER NOT NULL,
      expires_at  INTEGER NOT NULL,
      decided_by  TEXT,
      decided_at  INTEGER,
      used_at     INTEGER
    )`,
    "CREATE INDEX IF NOT EXISTS approvals_by_call ON approvals (key_id, tool_uid, call_hash, status)",
    // Lists page by rowid; an index some objects still have from before that would only cost a write per insert.
    "DROP INDEX IF EXISTS approvals_by_time",
  ],
  // 2: the approver's readable message (null for policy approvals), and compile
  // attempts counted per actor in ActorQuotaDO instead of per workspace here.
  ["ALTER TABLE approvals ADD COLUMN message TEXT", "DELETE FROM quota_events WHERE quota = 'compile_attempts'"],
  // 3: pending approvals are counted against the workspace's allowance; this index reads only those rows.
  ["CREATE INDEX IF NOT EXISTS approvals_pending ON approvals (expires_at) WHERE status = 'pending'"],
  // 4: upstream OAuth (worker/upstream-auth/grants.do.ts): authorization flows in progress, and grants with sealed tokens.
  [
    `CREATE TABLE upstream_oauth_flows (
      flow_id        TEXT PRIMARY KEY,
      state          TEXT NOT NULL UNIQUE,
      service_id     TEXT NOT NULL,
      subject        TEXT NOT NULL,
      purpose        TEXT NOT NULL CHECK (purpose IN ('service', 'caller')),
      initiator      TEXT NOT NULL,
      initiator_user TEXT,
      code_verifier  TEXT NOT NULL, -- sealed
      authorize_url  TEXT NOT NULL,
      return_to      TEXT,
      browser_hash   TEXT,
      created_at     INTEGER NOT NULL,
      expires_at     INTEGER NOT NULL
    )`,
    "CREATE INDEX upstream_oauth_flows_by_subject ON upstream_oauth_flows (service_id, subject)",
    `CREATE TABLE upstream_grants (
      id            TEXT PRIMARY KEY,
      service_id    TEXT NOT NULL,
      subject       TEXT NOT NULL,
      mode          TEXT NOT NULL CHECK (mode IN ('shared', 'per_user')),
      tokens        TEXT NOT NULL, -- sealed JSON: access and refresh token, expiry, scopes
      version       INTEGER NOT NULL,
      scopes        TEXT NOT NULL,
      expires_at    INTEGER,
      authorized_by TEXT NOT NULL,
      created_at    INTEGER NOT NULL,
      refreshed_at  INTEGER,
      last_used_at  INTEGER,
      UNIQUE (service_id, subject)
    )`,
  ],
  // 5: read leases on the call-affecting state (worker/leases/grants.do.ts): each version with the latest
  // expiry granted on it, each holder's latest expiry, the changes being written, and the random name of
  // this object's version sequence.
  [
    `CREATE TABLE lease_grants (
      holder     TEXT PRIMARY KEY,
      expires_at INTEGER NOT NULL -- the latest expiry granted to this holder, on the object's clock
    )`,
    `CREATE TABLE lease_versions (
      version       INTEGER PRIMARY KEY,
      effective_at  INTEGER NOT NULL, -- epoch ms on the object's clock
      granted_until INTEGER NOT NULL, -- the latest expiry granted on this version
      grants        INTEGER NOT NULL
    )`,
    `CREATE TABLE lease_changes (
      id        TEXT PRIMARY KEY,
      opened_at INTEGER NOT NULL
    )`,
    "CREATE TABLE lease_epoch (epoch TEXT NOT NULL)",
  ],
  // 6: the approver's optional note on a decision, shown with who decided.
  ["ALTER TABLE approvals ADD COLUMN decision_note TEXT"],
  // 7: finished approvals are deleted APPROVAL_RETENTION_MS after they expire (approvals.do.ts); this index finds them.
  ["CREATE INDEX IF NOT EXISTS approvals_by_expiry ON approvals (expires_at)"],
];

export const CURRENT_SCHEMA_VERSION = WORKSPACE_MIGRATIONS.length;
