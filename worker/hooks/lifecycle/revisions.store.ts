import type { HookStage } from "../../../schema/hooks/contract.ts";
import type { Channel } from "../../auth/principal.ts";
import type { PublicContract } from "../compiler/index.ts";
import type { JsonObject } from "./lifecycle.types.ts";
import type { Page } from "./versions.store.ts";

/** An immutable deployment revision: a compiled, tested version and what it was compiled against. */
export interface RevisionRecord {
  revisionId: string;
  /** The tool's revision number (r1, r2, …): its highest plus one when created; a reset starts them again at 1. */
  number: number;
  toolUid: string;
  versionId: string;
  contentHash: string;
  sourceHash: string;
  config: JsonObject;
  bundleKey: string;
  compiledBytes: number;
  stages: HookStage[];
  contract: PublicContract | null;
  replaces: { description: boolean; inputSchema: boolean; outputSchema: boolean };
  definitionHash: string;
  createdBy: string;
  channel: Channel;
  createdAt: string;
}

export interface StoredRevision extends RevisionRecord {
  seq: number;
}

interface RevisionRow {
  seq: number;
  id: string;
  number: number;
  tool_uid: string;
  version_id: string;
  content_hash: string;
  source_hash: string;
  config: string;
  bundle_key: string;
  compiled_bytes: number;
  stages: string;
  contract: string | null;
  replaces: string;
  definition_hash: string;
  created_by: string;
  channel: Channel;
  created_at: string;
}

const toStored = (row: RevisionRow): StoredRevision => ({
  seq: row.seq,
  revisionId: row.id,
  number: row.number,
  toolUid: row.tool_uid,
  versionId: row.version_id,
  contentHash: row.content_hash,
  sourceHash: row.source_hash,
  config: JSON.parse(row.config) as JsonObject,
  bundleKey: row.bundle_key,
  compiledBytes: row.compiled_bytes,
  stages: JSON.parse(row.stages) as HookStage[],
  contract: row.contract ? (JSON.parse(row.contract) as PublicContract) : null,
  replaces: JSON.parse(row.replaces) as RevisionRecord["replaces"],
  definitionHash: row.definition_hash,
  createdBy: row.created_by,
  channel: row.channel,
  createdAt: row.created_at,
});

export function toRevisionRecord(revision: StoredRevision): RevisionRecord {
  const { seq: _seq, ...record } = revision;
  return record;
}

/** Inserts the revision under the tool's next number, which it returns. */
export async function insertRevision(db: D1Database, workspaceId: string, revision: Omit<RevisionRecord, "number">): Promise<number> {
  const inserted = await db
    .prepare(
      `INSERT INTO hook_revisions (id, workspace_id, tool_uid, version_id, content_hash, source_hash, config, bundle_key,
         compiled_bytes, stages, contract, replaces, definition_hash, created_by, channel, created_at, number)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, COALESCE(MAX(number), 0) + 1
       FROM hook_revisions WHERE workspace_id = ?2 AND tool_uid = ?3
       RETURNING number`,
    )
    .bind(
      revision.revisionId,
      workspaceId,
      revision.toolUid,
      revision.versionId,
      revision.contentHash,
      revision.sourceHash,
      JSON.stringify(revision.config),
      revision.bundleKey,
      revision.compiledBytes,
      JSON.stringify(revision.stages),
      revision.contract ? JSON.stringify(revision.contract) : null,
      JSON.stringify(revision.replaces),
      revision.definitionHash,
      revision.createdBy,
      revision.channel,
      revision.createdAt,
    )
    .first<{ number: number }>();
  return inserted!.number;
}

/** A revision of this tool in this workspace; another tool's revision is not found. */
export async function findRevision(
  db: D1Database,
  workspaceId: string,
  toolUid: string,
  revisionId: string,
): Promise<StoredRevision | null> {
  const row = await db
    .prepare("SELECT * FROM hook_revisions WHERE workspace_id = ? AND tool_uid = ? AND id = ?")
    .bind(workspaceId, toolUid, revisionId)
    .first<RevisionRow>();
  return row ? toStored(row) : null;
}

export async function listRevisions(
  db: D1Database,
  workspaceId: string,
  toolUid: string,
  page: { limit: number; cursor?: number },
): Promise<Page<RevisionRecord>> {
  const { results } = await db
    .prepare("SELECT * FROM hook_revisions WHERE workspace_id = ? AND tool_uid = ? AND number < ? ORDER BY number DESC LIMIT ?")
    .bind(workspaceId, toolUid, page.cursor ?? Number.MAX_SAFE_INTEGER, page.limit + 1)
    .all<RevisionRow>();
  const items = results.slice(0, page.limit);
  const last = items[items.length - 1];
  return {
    items: items.map((row) => toRevisionRecord(toStored(row))),
    // Paged by the tool's own revision numbers: `seq` is shared by every workspace and would count their revisions.
    nextCursor: results.length > page.limit && last ? String(last.number) : null,
  };
}
