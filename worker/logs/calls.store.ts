import type { CallKind, CallRowOutcome, ShadowVerdict } from "./call-log.ts";
import { readScannedPage, type ScanQuery } from "./scan-window.ts";

/** A call row as the logs API shows it. `item` only to readers who see details (see logs.routes.ts). */
export interface StoredCall {
  /** The row's number within its workspace (`workspace_seq`); the table's own id counts every workspace's rows. */
  id: number;
  requestId: string;
  kind: CallKind;
  callIndex: number | null;
  createdAt: string;
  actor: string;
  grantedBy: string | null;
  profileId: string | null;
  serviceId: string | null;
  toolUid: string | null;
  name: string;
  item?: string | null;
  outcome: CallRowOutcome;
  code: string | null;
  durationMs: number;
  gatewayMs: number;
  hooksMs: number;
  upstreamMs: number;
  bytesIn: number;
  bytesOut: number;
  revisionId: string | null;
  shadow: ShadowVerdict | null;
  innerCalls: number | null;
  programSha256: string | null;
  programBytes: number | null;
}

export interface CallQuery {
  since?: string;
  until?: string;
  kind?: CallKind;
  /** Restricts to these kinds when `kind` is unset: a view that reads only some kinds of call. */
  kinds?: readonly CallKind[];
  tool?: string;
  service?: string;
  actor?: string;
  profile?: string;
  outcome?: CallRowOutcome;
  code?: string;
  requestId?: string;
  /** Rows with a smaller number than this (the previous page's cursor). */
  before?: number;
  limit: number;
}

interface CallTableRow {
  workspace_seq: number;
  request_id: string;
  kind: CallKind;
  call_index: number;
  created_at: string;
  actor: string;
  granted_by: string | null;
  profile_id: string | null;
  service_id: string | null;
  tool_uid: string | null;
  name: string;
  item: string | null;
  outcome: CallRowOutcome;
  code: string | null;
  duration_ms: number;
  gateway_ms: number;
  hooks_ms: number;
  upstream_ms: number;
  bytes_in: number;
  bytes_out: number;
  revision_id: string | null;
  shadow: ShadowVerdict | null;
  inner_calls: number | null;
  program_sha256: string | null;
  program_bytes: number | null;
}

function storedCall(row: CallTableRow, withItem: boolean): StoredCall {
  return {
    id: row.workspace_seq,
    requestId: row.request_id,
    kind: row.kind,
    callIndex: row.call_index === -1 ? null : row.call_index,
    createdAt: row.created_at,
    actor: row.actor,
    grantedBy: row.granted_by,
    profileId: row.profile_id,
    serviceId: row.service_id,
    toolUid: row.tool_uid,
    name: row.name,
    ...(withItem ? { item: row.item } : {}),
    outcome: row.outcome,
    code: row.code,
    durationMs: row.duration_ms,
    gatewayMs: row.gateway_ms,
    hooksMs: row.hooks_ms,
    upstreamMs: row.upstream_ms,
    bytesIn: row.bytes_in,
    bytesOut: row.bytes_out,
    revisionId: row.revision_id,
    shadow: row.shadow,
    innerCalls: row.inner_calls,
    programSha256: row.program_sha256,
    programBytes: row.program_bytes,
  };
}

/**
 * One page of `queryCalls`, read through the workspace's own index (its tool's, or its request's): the time filters
 * compare `+created_at`, so SQLite never reads them through `calls_by_time`, an index over every workspace's rows
 * (retention's). With planner statistics (ANALYZE, or the `PRAGMA optimize` D1 recommends) it once chose that index
 * for a small workspace's `since`/`until`, and one page read every other workspace's rows in that window. The other
 * filters are read row by row, within LOG_SCAN_ROWS rows (scan-window.ts).
 */
export function callsScan(workspaceId: string, query: CallQuery): ScanQuery {
  return {
    table: "calls",
    scope: [
      ["workspace_id = ?", workspaceId],
      ["tool_uid = ?", query.tool],
      ["request_id = ?", query.requestId],
    ],
    filters: [
      ["+created_at >= ?", query.since],
      ["+created_at < ?", query.until],
      ["kind = ?", query.kind],
      [`kind IN (${(query.kinds ?? []).map(() => "?").join(", ")})`, query.kind || !query.kinds?.length ? undefined : query.kinds],
      ["service_id = ?", query.service],
      ["actor = ?", query.actor],
      ["profile_id = ?", query.profile],
      ["outcome = ?", query.outcome],
      ["code = ?", query.code],
    ],
    before: query.before,
    since: query.since,
    limit: query.limit,
  };
}

/**
 * A workspace's call rows, newest first, and where the next page starts when the scan ended before this one filled
 * (`resumeBelow`). `withItem` is decided by the caller's role, never by the query.
 */
export async function queryCalls(
  db: D1Database,
  workspaceId: string,
  query: CallQuery,
  withItem: boolean,
): Promise<{ calls: StoredCall[]; resumeBelow: number | null }> {
  const { rows, resumeBelow } = await readScannedPage<CallTableRow>(db, callsScan(workspaceId, query));
  return { calls: rows.map((row) => storedCall(row, withItem)), resumeBelow };
}

/** The rows of one request: a call, or a run_code with its inner calls (at most 1,000), in index order. */
export async function callsOfRequest(db: D1Database, workspaceId: string, requestId: string, withItem: boolean): Promise<StoredCall[]> {
  const { results } = await db
    .prepare("SELECT * FROM calls WHERE workspace_id = ? AND request_id = ? ORDER BY call_index, workspace_seq LIMIT 1000")
    .bind(workspaceId, requestId)
    .all<CallTableRow>();
  return results.map((row) => storedCall(row, withItem));
}
