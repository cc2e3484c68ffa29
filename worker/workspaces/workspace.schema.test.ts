import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { applyMigrations, schemaVersion } from "../lib/sqlite-migrations.ts";
import { WorkspaceDO } from "./workspace.do.ts";
import { CURRENT_SCHEMA_VERSION, WORKSPACE_MIGRATIONS } from "./workspace.schema.ts";

const TABLES = [
  "approvals",
  "hook_deployments",
  "hook_drafts",
  "hook_history_usage",
  "lease_changes",
  "lease_epoch",
  "lease_grants",
  "lease_versions",
  "quota_events",
  "upstream_grants",
  "upstream_oauth_flows",
];
const INDEXES = ["approvals_by_call", "approvals_by_expiry", "approvals_pending", "quota_events_window", "upstream_oauth_flows_by_subject"];

/**
 * The layout objects had before migrations existed: each table module ran
 * these statements itself (copied verbatim from that code), and objects made
 * before approvals paged by rowid also have the `approvals_by_time` index.
 */
const LEGACY_DDL = [
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
      id TEXT PRIMARY KEY,
      tool_uid TEXT NOT NULL,
      public_name TEXT NOT NULL,
      key_id TEXT NOT NULL,
      revision_id TEXT,
      call_hash TEXT NOT NULL,
      arguments TEXT NOT NULL,
      reason TEXT NOT NULL,
      source TEXT NOT NULL,
      status TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      decided_by TEXT,
      decided_at INTEGER,
      used_at INTEGER
    )`,
  "CREATE INDEX IF NOT EXISTS approvals_by_call ON approvals (key_id, tool_uid, call_hash, status)",
  "CREATE INDEX IF NOT EXISTS approvals_by_time ON approvals (created_at)",
];

const freshObject = () => env.WORKSPACE.getByName(`ws_schema_${crypto.randomUUID()}`);

const names = (sql: SqlStorage, type: "table" | "index") =>
  sql
    .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%' ORDER BY name", type)
    .toArray()
    .map((row) => row.name);

const columns = (sql: SqlStorage, table: string) =>
  sql
    .exec<{ name: string }>(`PRAGMA table_info(${table})`)
    .toArray()
    .map((row) => row.name);

const history = (sql: SqlStorage) => sql.exec("SELECT version, applied_at FROM _schema_migrations ORDER BY version").toArray();

/**
 * Constructs the class over existing storage, as the runtime does when the
 * object next starts. The constructor migrates under blockConcurrencyWhile;
 * the next turn of that gate comes after it, as the first request would.
 */
async function startObject(state: DurableObjectState): Promise<WorkspaceDO> {
  const object = new WorkspaceDO(state, env);
  await state.blockConcurrencyWhile(async () => {});
  return object;
}

/** Empties the object's storage and lays out the legacy tables with one row in each, as an object from before would be. */
function seedLegacyObject(sql: SqlStorage, now: number): void {
  for (const table of [...TABLES, "_schema_migrations"]) sql.exec(`DROP TABLE IF EXISTS ${table}`);
  for (const statement of LEGACY_DDL) sql.exec(statement);
  sql.exec(
    "INSERT INTO hook_drafts VALUES ('tool_a', 'export default 1;', '{\"prefix\":\"x\"}', 'hash_a', 'hv_a', '2026-01-01T00:00:00.000Z')",
  );
  sql.exec(
    `INSERT INTO hook_deployments VALUES ('tool_a', 'active', 'rev_a', 'hv_a', 'bundles/k.js', 120, '["before"]', NULL, '{}', 'def_a',
       'key_a', '2026-01-01T00:00:00.000Z')`,
  );
  sql.exec(
    "INSERT INTO quota_events (quota, subject, at) VALUES ('draft_saves', 'ws_legacy', ?), ('compile_attempts', 'key_a', ?)",
    now,
    now,
  );
  sql.exec("INSERT INTO hook_history_usage VALUES ('tool_a', 640)");
  sql.exec(
    `INSERT INTO approvals (id, tool_uid, public_name, key_id, revision_id, call_hash, arguments, reason, source, status, created_at, expires_at)
     VALUES ('apr_legacy', 'tool_a', 'demo__delete_record', 'key_a', NULL, 'hash', '{"id":"r1"}', 'policy_approval', 'policy', 'pending', ?, ?)`,
    now,
    now + 60_000,
  );
}

describe("workspace Durable Object schema", () => {
  it("a fresh object ends at the current version with every table", async () => {
    await runInDurableObject(freshObject(), (_instance, state) => {
      const sql = state.storage.sql;
      expect(CURRENT_SCHEMA_VERSION).toBe(WORKSPACE_MIGRATIONS.length);
      expect(schemaVersion(sql)).toBe(CURRENT_SCHEMA_VERSION);
      expect(history(sql).map((row) => row.version)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(names(sql, "table")).toEqual(["_schema_migrations", ...TABLES]);
      expect(names(sql, "index")).toEqual(INDEXES);
      expect(columns(sql, "approvals")).toContain("message");
      expect(columns(sql, "approvals")).toContain("decision_note");
    });
  });

  it("upgrades an object created by the per-module DDL without losing its rows", async () => {
    await runInDurableObject(freshObject(), async (_instance, state) => {
      const sql = state.storage.sql;
      const now = Date.now();
      seedLegacyObject(sql, now);
      expect(schemaVersion(sql)).toBe(0);

      // What the runtime does when such an object next starts.
      const upgraded = await startObject(state);
      expect(schemaVersion(sql)).toBe(CURRENT_SCHEMA_VERSION);
      expect(names(sql, "index")).toEqual(INDEXES);

      expect(upgraded.hookDraft("tool_a")).toMatchObject({ source: "export default 1;", config: { prefix: "x" }, versionId: "hv_a" });
      expect(upgraded.toolDeployments("tool_a").active).toMatchObject({ revisionId: "rev_a", bundleBytes: 120, stages: ["before"] });
      expect(upgraded.hookUsage("ws_legacy")).toMatchObject({
        draftSaves: { used: 1 },
        historyBytes: { used: 640 },
        deployedBytes: { used: 120 },
      });
      expect(upgraded.getApproval("apr_legacy")).toMatchObject({
        status: "pending",
        reason: "policy_approval",
        message: null,
        decisionNote: null,
      });
      // Compile attempts moved to each actor's ActorQuotaDO; their old per-workspace rows are gone.
      expect(sql.exec("SELECT quota FROM quota_events").toArray()).toEqual([{ quota: "draft_saves" }]);
    });
  });

  it("never runs a migration twice", async () => {
    await runInDurableObject(freshObject(), async (_instance, state) => {
      const before = history(state.storage.sql);
      // Step 2 adds a column, which fails if it runs again on the same table.
      expect(applyMigrations(state.storage, WORKSPACE_MIGRATIONS)).toBe(CURRENT_SCHEMA_VERSION);
      await startObject(state);
      expect(history(state.storage.sql)).toEqual(before);
    });
  });

  it("runs only the steps a storage has not had, in order", async () => {
    await runInDurableObject(freshObject(), (_instance, state) => {
      const sql = state.storage.sql;
      const steps = [
        ["CREATE TABLE runs_probe (step INTEGER NOT NULL)", "INSERT INTO runs_probe VALUES (1)"],
        ["INSERT INTO runs_probe VALUES (2)"],
      ];
      sql.exec("DELETE FROM _schema_migrations");
      expect(applyMigrations(state.storage, steps.slice(0, 1))).toBe(1);
      expect(applyMigrations(state.storage, steps.slice(0, 1))).toBe(1);
      expect(applyMigrations(state.storage, steps)).toBe(2);
      expect(applyMigrations(state.storage, steps)).toBe(2);
      expect(sql.exec("SELECT step FROM runs_probe ORDER BY rowid").toArray()).toEqual([{ step: 1 }, { step: 2 }]);
    });
  });

  it("rolls a failing step back whole and does not record it", async () => {
    await runInDurableObject(freshObject(), (_instance, state) => {
      const sql = state.storage.sql;
      const steps = [["CREATE TABLE half_probe (n INTEGER)", "INSERT INTO no_such_table VALUES (1)"]];
      sql.exec("DELETE FROM _schema_migrations");
      expect(() => applyMigrations(state.storage, steps)).toThrow(/no_such_table/);
      expect(schemaVersion(sql)).toBe(0);
      expect(names(sql, "table")).not.toContain("half_probe");
    });
  });
});
