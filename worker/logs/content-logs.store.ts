import { logWhere } from "./log-filter.ts";

/** One resources/read or prompts/get through /mcp: metadata only, never content or prompt arguments. */
export interface ContentLogEntry {
  serviceId: string;
  keyId: string;
  /** Who made the request: `key:<key id>` or `oauth:<client_id>`. */
  actor: string;
  requestId: string;
  method: "resources/read" | "prompts/get";
  /** The upstream URI or prompt name. */
  item: string;
  outcome: "ok" | "blocked" | "upstream_error" | "upstream_failed";
  code: string | null;
  durationMs: number;
}

/** A stored row as the logs API shows it. `item` only to readers who see details (see the route). */
export interface StoredContentLog {
  id: number;
  serviceId: string;
  actor: string | null;
  requestId: string;
  method: ContentLogEntry["method"];
  item?: string;
  outcome: ContentLogEntry["outcome"];
  code: string | null;
  durationMs: number;
  createdAt: string;
}

/** Characters of the URI or prompt name a row keeps. */
export const CONTENT_LOG_ITEM_CHARS = 512;

export async function writeContentLog(db: D1Database, workspaceId: string, entry: ContentLogEntry): Promise<void> {
  await db
    .prepare(
      `INSERT INTO content_logs (workspace_id, service_id, key_id, actor, request_id, method, item, outcome, code, duration_ms, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      workspaceId,
      entry.serviceId,
      entry.keyId,
      entry.actor,
      entry.requestId,
      entry.method,
      entry.item.slice(0, CONTENT_LOG_ITEM_CHARS),
      entry.outcome,
      entry.code,
      entry.durationMs,
      new Date().toISOString(),
    )
    .run();
}

export interface ContentLogQuery {
  since?: string;
  until?: string;
  method?: ContentLogEntry["method"];
  outcome?: ContentLogEntry["outcome"];
  requestId?: string;
  /** Rows with a smaller id than this (the previous page's cursor). */
  before?: number;
  limit: number;
}

interface ContentLogRow {
  id: number;
  service_id: string;
  actor: string | null;
  request_id: string;
  method: ContentLogEntry["method"];
  item: string;
  outcome: ContentLogEntry["outcome"];
  code: string | null;
  duration_ms: number;
  created_at: string;
}

/** One service's rows, newest first. `withItem` is decided by the caller's role, never by the query. */
export async function queryContentLogs(
  db: D1Database,
  workspaceId: string,
  serviceId: string,
  query: ContentLogQuery,
  withItem: boolean,
): Promise<StoredContentLog[]> {
  const { where, params } = logWhere(
    [
      ["workspace_id = ?", workspaceId],
      ["service_id = ?", serviceId],
    ],
    [
      ["created_at >= ?", query.since],
      ["created_at < ?", query.until],
      ["method = ?", query.method],
      ["outcome = ?", query.outcome],
      ["request_id = ?", query.requestId],
      ["id < ?", query.before],
    ],
  );
  const { results } = await db
    .prepare(`SELECT * FROM content_logs WHERE ${where} ORDER BY id DESC LIMIT ?`)
    .bind(...params, query.limit)
    .all<ContentLogRow>();
  return results.map((row) => ({
    id: row.id,
    serviceId: row.service_id,
    actor: row.actor,
    requestId: row.request_id,
    method: row.method,
    ...(withItem ? { item: row.item } : {}),
    outcome: row.outcome,
    code: row.code,
    durationMs: row.duration_ms,
    createdAt: row.created_at,
  }));
}
