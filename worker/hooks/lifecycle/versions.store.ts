import type { Channel } from "../../auth/principal.ts";
import type { HookActor, JsonObject } from "./lifecycle.types.ts";

/** One immutable, attributed draft version as the API shows it. */
export interface VersionSummary {
  versionId: string;
  /** The tool's version number (v1, v2, …): its highest plus one when saved; a reset starts them again at 1. */
  number: number;
  toolUid: string;
  contentHash: string;
  bytes: number;
  note: string | null;
  restoredFrom: string | null;
  actorId: string;
  actorKind: "key" | "user";
  channel: Channel;
  createdAt: string;
}

export interface VersionRecord extends VersionSummary {
  source: string;
  config: JsonObject;
}

/** The internal position of a version, used for ordering and cursors. */
export interface StoredVersion extends VersionRecord {
  seq: number;
}

interface VersionRow {
  seq: number;
  id: string;
  number: number;
  tool_uid: string;
  source?: string;
  config?: string;
  content_hash: string;
  bytes: number;
  note: string | null;
  restored_from: string | null;
  actor_id: string;
  actor_kind: "key" | "user";
  channel: Channel;
  created_at: string;
}

const SUMMARY_COLUMNS = "seq, id, number, tool_uid, content_hash, bytes, note, restored_from, actor_id, actor_kind, channel, created_at";

const toSummary = (row: VersionRow): VersionSummary => ({
  versionId: row.id,
  number: row.number,
  toolUid: row.tool_uid,
  contentHash: row.content_hash,
  bytes: row.bytes,
  note: row.note,
  restoredFrom: row.restored_from,
  actorId: row.actor_id,
  actorKind: row.actor_kind,
  channel: row.channel,
  createdAt: row.created_at,
});

const toStored = (row: VersionRow): StoredVersion => ({
  ...toSummary(row),
  seq: row.seq,
  source: row.source ?? "",
  config: JSON.parse(row.config ?? "{}") as JsonObject,
});

export interface NewVersion {
  id: string;
  workspaceId: string;
  toolUid: string;
  source: string;
  config: JsonObject;
  contentHash: string;
  bytes: number;
  note: string | null;
  restoredFrom: string | null;
  actor: HookActor;
  createdAt: string;
}

export async function insertVersion(db: D1Database, version: NewVersion): Promise<void> {
  await db
    .prepare(
      `INSERT INTO hook_versions (id, workspace_id, tool_uid, source, config, content_hash, bytes, note, restored_from,
         actor_id, actor_kind, channel, created_at, number)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, COALESCE(MAX(number), 0) + 1
       FROM hook_versions WHERE workspace_id = ?2 AND tool_uid = ?3`,
    )
    .bind(
      version.id,
      version.workspaceId,
      version.toolUid,
      version.source,
      JSON.stringify(version.config),
      version.contentHash,
      version.bytes,
      version.note,
      version.restoredFrom,
      version.actor.id,
      version.actor.kind,
      version.actor.channel,
      version.createdAt,
    )
    .run();
}

export function toVersionRecord(version: StoredVersion): VersionRecord {
  const { seq: _seq, ...record } = version;
  return record;
}

export async function findVersion(db: D1Database, workspaceId: string, toolUid: string, versionId: string): Promise<StoredVersion | null> {
  const row = await db
    .prepare("SELECT * FROM hook_versions WHERE workspace_id = ? AND tool_uid = ? AND id = ?")
    .bind(workspaceId, toolUid, versionId)
    .first<VersionRow>();
  return row ? toStored(row) : null;
}

/** The version saved just before `seq` for the same tool, or null for the first one. */
export async function previousVersion(db: D1Database, workspaceId: string, toolUid: string, seq: number): Promise<StoredVersion | null> {
  const row = await db
    .prepare("SELECT * FROM hook_versions WHERE workspace_id = ? AND tool_uid = ? AND seq < ? ORDER BY seq DESC LIMIT 1")
    .bind(workspaceId, toolUid, seq)
    .first<VersionRow>();
  return row ? toStored(row) : null;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * One page of a tool's versions, newest first, without their content. The
 * cursor is the position of the last version returned, so pages stay stable
 * while new versions are saved.
 */
export async function listVersions(
  db: D1Database,
  workspaceId: string,
  toolUid: string,
  page: { limit: number; cursor?: number },
): Promise<Page<VersionSummary>> {
  const { results } = await db
    .prepare(
      `SELECT ${SUMMARY_COLUMNS} FROM hook_versions WHERE workspace_id = ? AND tool_uid = ? AND number < ? ORDER BY number DESC LIMIT ?`,
    )
    .bind(workspaceId, toolUid, page.cursor ?? Number.MAX_SAFE_INTEGER, page.limit + 1)
    .all<VersionRow>();
  const items = results.slice(0, page.limit);
  const last = items[items.length - 1];
  // Paged by the tool's own version numbers: `seq` is shared by every workspace and would count their saves.
  return { items: items.map(toSummary), nextCursor: results.length > page.limit && last ? String(last.number) : null };
}

/** Full versions oldest first after `afterSeq`, for exports streamed page by page. */
export async function versionsAfter(
  db: D1Database,
  workspaceId: string,
  toolUid: string,
  afterSeq: number,
  limit: number,
): Promise<StoredVersion[]> {
  const { results } = await db
    .prepare("SELECT * FROM hook_versions WHERE workspace_id = ? AND tool_uid = ? AND seq > ? ORDER BY seq LIMIT ?")
    .bind(workspaceId, toolUid, afterSeq, limit)
    .all<VersionRow>();
  return results.map(toStored);
}
