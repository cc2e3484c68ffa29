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
  // 4: the approver's optional note on a decision, shown with who decided.
  ["ALTER TABLE approvals ADD COLUMN decision_note TEXT"],
];

export const CURRENT_SCHEMA_VERSION = WORKSPACE_MIGRATIONS.length;
