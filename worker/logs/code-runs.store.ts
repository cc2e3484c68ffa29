import { logWhere } from "./log-filter.ts";

/** One run_code through /mcp: metadata only, never the program's text or its result. */
export interface CodeRunEntry {
  keyId: string;
  /** Who ran it: `key:<key id>` or `oauth:<client_id>`. */
  actor: string;
  /** The run's request id, which its inner calls' rows carry too. */
  requestId: string;
  outcome: "ok" | "error";
  code: string | null;
  innerCalls: number;
  /** The program's SHA-256 (hex) and its UTF-8 size; null when the arguments held no program. */
  program: { sha256: string; bytes: number } | null;
  durationMs: number;
}

export interface StoredCodeRun {
  id: number;
  actor: string;
  requestId: string;
  outcome: CodeRunEntry["outcome"];
  code: string | null;
  innerCalls: number;
  programSha256: string | null;
  programBytes: number | null;
  durationMs: number;
  createdAt: string;
}

export async function writeCodeRun(db: D1Database, workspaceId: string, entry: CodeRunEntry): Promise<void> {
  await db
    .prepare(
      `INSERT INTO code_runs (workspace_id, key_id, actor, request_id, outcome, code, inner_calls, program_sha256, program_bytes, duration_ms, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      workspaceId,
      entry.keyId,
      entry.actor,
      entry.requestId,
      entry.outcome,
      entry.code,
      entry.innerCalls,
      entry.program?.sha256 ?? null,
      entry.program?.bytes ?? null,
      entry.durationMs,
      new Date().toISOString(),
    )
    .run();
}

export interface CodeRunQuery {
  since?: string;
  until?: string;
  outcome?: CodeRunEntry["outcome"];
  requestId?: string;
  /** Rows with a smaller id than this (the previous page's cursor). */
  before?: number;
  limit: number;
}

interface CodeRunRow {
  id: number;
  actor: string;
  request_id: string;
  outcome: CodeRunEntry["outcome"];
  code: string | null;
  inner_calls: number;
  program_sha256: string | null;
  program_bytes: number | null;
  duration_ms: number;
  created_at: string;
}

/** A workspace's runs, newest first. */
export async function queryCodeRuns(db: D1Database, workspaceId: string, query: CodeRunQuery): Promise<StoredCodeRun[]> {
  const { where, params } = logWhere(
    [["workspace_id = ?", workspaceId]],
    [
      ["created_at >= ?", query.since],
      ["created_at < ?", query.until],
      ["outcome = ?", query.outcome],
      ["request_id = ?", query.requestId],
      ["id < ?", query.before],
    ],
  );
  const { results } = await db
    .prepare(`SELECT * FROM code_runs WHERE ${where} ORDER BY id DESC LIMIT ?`)
    .bind(...params, query.limit)
    .all<CodeRunRow>();
  return results.map((row) => ({
    id: row.id,
    actor: row.actor,
    requestId: row.request_id,
    outcome: row.outcome,
    code: row.code,
    innerCalls: row.inner_calls,
    programSha256: row.program_sha256,
    programBytes: row.program_bytes,
    durationMs: row.duration_ms,
    createdAt: row.created_at,
  }));
}
