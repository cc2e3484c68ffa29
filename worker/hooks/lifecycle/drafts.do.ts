import type { JsonObject } from "./lifecycle.types.ts";

/** A tool's mutable draft: its content and the version it was saved as. */
export interface Draft {
  toolUid: string;
  source: string;
  config: JsonObject;
  contentHash: string;
  versionId: string;
  updatedAt: string;
}

interface DraftRow {
  tool_uid: string;
  source: string;
  config: string;
  content_hash: string;
  version_id: string;
  updated_at: string;
  [key: string]: SqlStorageValue;
}

/**
 * Hook drafts in the workspace Durable Object's SQLite. Every method is
 * synchronous SQL; the lifecycle serialises writers per tool around them.
 */
export class DraftTable {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  get(toolUid: string): Draft | null {
    const row = this.#sql.exec<DraftRow>("SELECT * FROM hook_drafts WHERE tool_uid = ?", toolUid).toArray()[0];
    if (!row) return null;
    return {
      toolUid: row.tool_uid,
      source: row.source,
      config: JSON.parse(row.config) as JsonObject,
      contentHash: row.content_hash,
      versionId: row.version_id,
      updatedAt: row.updated_at,
    };
  }

  put(draft: Draft): void {
    this.#sql.exec(
      `INSERT INTO hook_drafts (tool_uid, source, config, content_hash, version_id, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tool_uid) DO UPDATE SET source = excluded.source, config = excluded.config,
         content_hash = excluded.content_hash, version_id = excluded.version_id, updated_at = excluded.updated_at`,
      draft.toolUid,
      draft.source,
      JSON.stringify(draft.config),
      draft.contentHash,
      draft.versionId,
      draft.updatedAt,
    );
  }

  delete(toolUid: string): void {
    this.#sql.exec("DELETE FROM hook_drafts WHERE tool_uid = ?", toolUid);
  }
}
