/** One resources/read or prompts/get through /mcp: metadata only, never content or prompt arguments. */
export interface ContentLogEntry {
  serviceId: string;
  keyId: string;
  requestId: string;
  method: "resources/read" | "prompts/get";
  /** The upstream URI or prompt name. */
  item: string;
  outcome: "ok" | "blocked" | "upstream_error" | "upstream_failed";
  code: string | null;
  durationMs: number;
}

/** Characters of the URI or prompt name a row keeps. */
export const CONTENT_LOG_ITEM_CHARS = 512;

export async function writeContentLog(db: D1Database, workspaceId: string, entry: ContentLogEntry): Promise<void> {
  await db
    .prepare(
      `INSERT INTO content_logs (workspace_id, service_id, key_id, request_id, method, item, outcome, code, duration_ms, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      workspaceId,
      entry.serviceId,
      entry.keyId,
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
