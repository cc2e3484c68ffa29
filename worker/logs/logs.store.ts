import { allowanceSpentJson, boundedDetailsJson, LOG_DETAIL_ALLOWANCE_BYTES, LOG_DETAIL_WINDOW_HOURS, usageHour } from "./log-details.ts";
import { logWhere } from "./log-filter.ts";

/** One row of the call log: a hook stage run, or a refusal/failure before or at dispatch. */
export interface CallLogEntry {
  toolUid: string;
  requestId: string;
  stage: "before" | "after" | "pre_dispatch" | "upstream";
  channel: "active" | "shadow";
  outcome: string;
  code: string | null;
  durationMs: number;
  revisionId: string | null;
  shadowDiffered: boolean | null;
  /** A Code Mode inner call's 0-based index in its run (whose request id the row carries); absent on direct calls. */
  callIndex?: number | null;
  /** Hook-supplied or payload-derived text; dropped unless the capture policy allows it. */
  details?: Record<string, unknown>;
}

export interface StoredCallLog extends Omit<CallLogEntry, "details" | "callIndex"> {
  callIndex: number | null;
  id: number;
  /** Who made the call: `key:<key id>` or `oauth:<client_id>`; null on rows older than the column. */
  actor: string | null;
  createdAt: string;
  details?: Record<string, unknown> | null;
}

/** Metadata always; payload details removed retention-wise after this long (docs/hooks.md, Logs). */
const LOG_DETAIL_RETENTION_DAYS = 7;
const LOG_RETENTION_DAYS = 30;

/**
 * The statements that write a call's rows, for one D1 batch (one transaction).
 * Captured details are cut to the row cap, then counted against the
 * workspace's rolling allowance in the same batch: each row's insert and its
 * usage increment test the same condition on the usage table, which nothing
 * else changes between the two, so concurrent calls cannot both spend the last
 * bytes. Over the allowance the row stores a marker instead of its details.
 */
export function insertLogStatements(
  db: D1Database,
  workspaceId: string,
  actor: string,
  entries: CallLogEntry[],
  captureDetails: boolean,
  createdAt: string,
): D1PreparedStatement[] {
  const hour = usageHour(createdAt);
  const windowStart = hour - LOG_DETAIL_WINDOW_HOURS;
  const withinAllowance = `COALESCE((SELECT SUM(bytes) FROM log_detail_usage WHERE workspace_id = ? AND hour > ?), 0) + ? <= ?`;
  return entries.flatMap((entry) => {
    const metadata = [
      workspaceId,
      entry.toolUid,
      entry.requestId,
      entry.stage,
      entry.channel,
      entry.outcome,
      entry.code,
      entry.durationMs,
      entry.revisionId,
      entry.shadowDiffered === null ? null : entry.shadowDiffered ? 1 : 0,
      actor,
      entry.callIndex ?? null,
    ];
    const insert = (details: string) =>
      `INSERT INTO call_logs (workspace_id, tool_uid, request_id, stage, channel, outcome, code, duration_ms, revision_id,
         shadow_differed, actor, call_index, details, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${details}, ?)`;
    if (!captureDetails || !entry.details) return [db.prepare(insert("NULL")).bind(...metadata, createdAt)];
    const details = boundedDetailsJson(entry.details);
    const condition = [workspaceId, windowStart, details.bytes, LOG_DETAIL_ALLOWANCE_BYTES];
    return [
      db
        .prepare(insert(`CASE WHEN ${withinAllowance} THEN ? ELSE ? END`))
        .bind(...metadata, ...condition, details.json, allowanceSpentJson(details.bytes), createdAt),
      db
        .prepare(
          `INSERT INTO log_detail_usage (workspace_id, hour, bytes) SELECT ?, ?, ? WHERE ${withinAllowance}
           ON CONFLICT (workspace_id, hour) DO UPDATE SET bytes = bytes + excluded.bytes`,
        )
        .bind(workspaceId, hour, details.bytes, ...condition),
    ];
  });
}

export interface LogQuery {
  since?: string;
  until?: string;
  stage?: CallLogEntry["stage"];
  channel?: CallLogEntry["channel"];
  outcome?: string;
  requestId?: string;
  /** Rows with a smaller id than this (the previous page's cursor). */
  before?: number;
  limit: number;
}

interface LogRow {
  id: number;
  tool_uid: string;
  request_id: string;
  stage: CallLogEntry["stage"];
  channel: CallLogEntry["channel"];
  outcome: string;
  code: string | null;
  duration_ms: number;
  revision_id: string | null;
  shadow_differed: number | null;
  actor: string | null;
  call_index: number | null;
  details: string | null;
  created_at: string;
}

/** Newest first. `withDetails` is decided by the caller's role, never by the query. */
export async function queryLogs(
  db: D1Database,
  workspaceId: string,
  toolUid: string,
  query: LogQuery,
  withDetails: boolean,
): Promise<StoredCallLog[]> {
  const { where, params } = logWhere(
    [
      ["workspace_id = ?", workspaceId],
      ["tool_uid = ?", toolUid],
    ],
    [
      ["created_at >= ?", query.since],
      ["created_at < ?", query.until],
      ["stage = ?", query.stage],
      ["channel = ?", query.channel],
      ["outcome = ?", query.outcome],
      ["request_id = ?", query.requestId],
      ["id < ?", query.before],
    ],
  );
  const { results } = await db
    .prepare(`SELECT * FROM call_logs WHERE ${where} ORDER BY id DESC LIMIT ?`)
    .bind(...params, query.limit)
    .all<LogRow>();
  return results.map((row) => ({
    id: row.id,
    toolUid: row.tool_uid,
    requestId: row.request_id,
    stage: row.stage,
    channel: row.channel,
    outcome: row.outcome,
    code: row.code,
    durationMs: row.duration_ms,
    revisionId: row.revision_id,
    shadowDiffered: row.shadow_differed === null ? null : row.shadow_differed === 1,
    actor: row.actor,
    callIndex: row.call_index,
    createdAt: row.created_at,
    ...(withDetails ? { details: row.details ? (JSON.parse(row.details) as Record<string, unknown>) : null } : {}),
  }));
}

/** The scheduled retention job: clear details past their retention, delete rows past theirs, and spent allowance hours. */
export async function applyLogRetention(db: D1Database, now = Date.now()): Promise<{ cleared: number; deleted: number }> {
  const day = 24 * 60 * 60 * 1000;
  const detailCutoff = new Date(now - LOG_DETAIL_RETENTION_DAYS * day).toISOString();
  const rowCutoff = new Date(now - LOG_RETENTION_DAYS * day).toISOString();
  const [cleared, deleted, deletedContent, deletedRuns] = await db.batch([
    db.prepare("UPDATE call_logs SET details = NULL WHERE details IS NOT NULL AND created_at < ?").bind(detailCutoff),
    db.prepare("DELETE FROM call_logs WHERE created_at < ?").bind(rowCutoff),
    db.prepare("DELETE FROM content_logs WHERE created_at < ?").bind(rowCutoff),
    db.prepare("DELETE FROM code_runs WHERE created_at < ?").bind(rowCutoff),
    // Hours that have left every workspace's rolling detail allowance.
    db.prepare("DELETE FROM log_detail_usage WHERE hour <= ?").bind(usageHour(new Date(now).toISOString()) - LOG_DETAIL_WINDOW_HOURS),
  ]);
  const deletedRows = [deleted, deletedContent, deletedRuns].reduce((sum, result) => sum + (result?.meta.changes ?? 0), 0);
  return { cleared: cleared?.meta.changes ?? 0, deleted: deletedRows };
}
