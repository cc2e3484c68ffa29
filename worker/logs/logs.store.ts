import type { StageRow } from "./call-log.ts";
import { LOG_DETAIL_WINDOW_HOURS, usageHour } from "./log-details.ts";
import { readScannedPage, type ScanQuery } from "./scan-window.ts";

export interface StoredCallLog extends Omit<StageRow, "details" | "callIndex" | "offsetMs"> {
  callIndex: number | null;
  /** The row's number within its workspace (`workspace_seq`); the table's own id counts every workspace's rows. */
  id: number;
  /** Who made the call: `key:<key id>` or `oauth:<client_id>`; null on rows older than the column. */
  actor: string | null;
  createdAt: string;
  details?: Record<string, unknown> | null;
}

/** Metadata always; payload details removed retention-wise after this long (docs/logs.md). */
const LOG_DETAIL_RETENTION_DAYS = 7;
const LOG_RETENTION_DAYS = 30;

export interface LogQuery {
  since?: string;
  until?: string;
  stage?: StageRow["stage"];
  channel?: StageRow["channel"];
  outcome?: string;
  requestId?: string;
  /** Rows with a smaller number than this (the previous page's cursor). */
  before?: number;
  limit: number;
}

interface LogRow {
  workspace_seq: number;
  tool_uid: string;
  request_id: string;
  stage: StageRow["stage"];
  channel: StageRow["channel"];
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

/** One page of `queryLogs`: the tool's (or request's) index, time filters as in `callsScan` (calls.store.ts). */
export function stageRowsScan(workspaceId: string, toolUid: string, query: LogQuery): ScanQuery {
  return {
    table: "call_logs",
    scope: [
      ["workspace_id = ?", workspaceId],
      ["tool_uid = ?", toolUid],
      ["request_id = ?", query.requestId],
    ],
    filters: [
      ["+created_at >= ?", query.since],
      ["+created_at < ?", query.until],
      ["stage = ?", query.stage],
      ["channel = ?", query.channel],
      ["outcome = ?", query.outcome],
    ],
    before: query.before,
    since: query.since,
    limit: query.limit,
  };
}

/** Newest first, and where the next page starts when the scan ended first. `withDetails` is decided by the caller's role. */
export async function queryLogs(
  db: D1Database,
  workspaceId: string,
  toolUid: string,
  query: LogQuery,
  withDetails: boolean,
): Promise<{ logs: StoredCallLog[]; resumeBelow: number | null }> {
  const { rows, resumeBelow } = await readScannedPage<LogRow>(db, stageRowsScan(workspaceId, toolUid, query));
  return { logs: rows.map((row) => storedStageRow(row, withDetails)), resumeBelow };
}

/** Every stage row of one call (a run_code's inner calls included), in the order they happened. */
export async function stageRowsOf(db: D1Database, workspaceId: string, requestId: string, withDetails: boolean): Promise<StoredCallLog[]> {
  const { results } = await db
    .prepare("SELECT * FROM call_logs WHERE workspace_id = ? AND request_id = ? ORDER BY workspace_seq LIMIT 1000")
    .bind(workspaceId, requestId)
    .all<LogRow>();
  return results.map((row) => storedStageRow(row, withDetails));
}

function storedStageRow(row: LogRow, withDetails: boolean): StoredCallLog {
  return {
    id: row.workspace_seq,
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
  };
}

const keepRowFloor = (db: D1Database, table: "calls" | "call_logs", cutoffIso: string) =>
  db
    .prepare(
      `INSERT INTO workspace_row_floors (workspace_id, table_name, floor)
        SELECT workspace_id, '${table}', MAX(workspace_seq) FROM ${table} WHERE created_at < ? AND workspace_seq IS NOT NULL GROUP BY workspace_id
        ON CONFLICT (workspace_id, table_name) DO UPDATE SET floor = MAX(floor, excluded.floor)`,
    )
    .bind(cutoffIso);

/**
 * The scheduled retention job: clear details past their retention; delete call rows, stage rows, rollups and loss
 * counts past theirs, and allowance hours that have left the window. Rollups go with the rows they count, so a chart
 * never shows calls whose rows are gone.
 */
export async function applyLogRetention(db: D1Database, now = Date.now()): Promise<{ cleared: number; deleted: number }> {
  const day = 24 * 60 * 60 * 1000;
  const detailCutoff = new Date(now - LOG_DETAIL_RETENTION_DAYS * day).toISOString();
  const rowCutoff = now - LOG_RETENTION_DAYS * day;
  const rowCutoffIso = new Date(rowCutoff).toISOString();
  const minuteCutoff = Math.floor(rowCutoff / 60_000);
  const [cleared, ...deletions] = await db.batch([
    db.prepare("UPDATE call_logs SET details = NULL WHERE details IS NOT NULL AND created_at < ?").bind(detailCutoff),
    // The highest number each workspace loses, first: its next rows are numbered above it, never from 1 again.
    keepRowFloor(db, "call_logs", rowCutoffIso),
    keepRowFloor(db, "calls", rowCutoffIso),
    db.prepare("DELETE FROM call_logs WHERE created_at < ?").bind(rowCutoffIso),
    db.prepare("DELETE FROM calls WHERE created_at < ?").bind(rowCutoffIso),
    db.prepare("DELETE FROM call_rollups WHERE minute < ?").bind(minuteCutoff),
    db.prepare("DELETE FROM call_log_losses WHERE minute < ?").bind(minuteCutoff),
    // Hours that have left every workspace's rolling detail allowance.
    db.prepare("DELETE FROM log_detail_usage WHERE hour <= ?").bind(usageHour(new Date(now).toISOString()) - LOG_DETAIL_WINDOW_HOURS),
  ]);
  const deletedRows = deletions.slice(2, 4).reduce((sum, result) => sum + (result?.meta.changes ?? 0), 0);
  return { cleared: cleared?.meta.changes ?? 0, deleted: deletedRows };
}
