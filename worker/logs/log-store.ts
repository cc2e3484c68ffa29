import type { CallLogMessage, CallRow, StageRow } from "./call-log.ts";
import { durationBucket } from "./histogram.ts";
import { LOG_DETAIL_ALLOWANCE_BYTES, LOG_DETAIL_WINDOW_HOURS, usageHour } from "./log-details.ts";

/**
 * Where call-log rows go: the one module that decides it. Today every workspace's rows and rollups live in the one
 * `DB`; a workspace too large for it would get a database (or an R2 prefix for raw rows) of its own here, and
 * nothing else would change: the consumer groups a batch by `logDatabase`, and readers ask it too (docs/logs.md).
 */
export function logDatabase(env: Env, _workspaceId: string): D1Database {
  return env.DB;
}

/** The largest JSON a statement binds (D1 takes up to 2 MB in one value); a larger batch is split over statements. */
const STATEMENT_JSON_BYTES = 1024 * 1024;

const encoder = new TextEncoder();
const utf8 = (text: string) => encoder.encode(text).byteLength;

/** One call row as a JSON array, in the column order of INSERT_CALLS. */
const callValues = (call: CallRow) => [
  call.workspaceId,
  call.requestId,
  call.kind,
  call.callIndex ?? -1,
  call.startedAt,
  call.actor,
  call.keyId,
  call.grantedBy,
  call.profileId,
  call.serviceId,
  call.toolUid,
  call.name,
  call.item,
  call.outcome,
  call.code,
  call.durationMs,
  call.gatewayMs,
  call.hooksMs,
  call.upstreamMs,
  durationBucket(call.durationMs),
  call.bytesIn,
  call.bytesOut,
  call.revisionId,
  call.shadow,
  call.innerCalls,
  call.program?.sha256 ?? null,
  call.program?.bytes ?? null,
];

const CALL_COLUMNS = [
  "workspace_id",
  "request_id",
  "kind",
  "call_index",
  "created_at",
  "actor",
  "key_id",
  "granted_by",
  "profile_id",
  "service_id",
  "tool_uid",
  "name",
  "item",
  "outcome",
  "code",
  "duration_ms",
  "gateway_ms",
  "hooks_ms",
  "upstream_ms",
  "duration_bucket",
  "bytes_in",
  "bytes_out",
  "revision_id",
  "shadow",
  "inner_calls",
  "program_sha256",
  "program_bytes",
];

/**
 * A row's number within its workspace (`workspace_seq`, what the API shows as its id): the workspace's highest so
 * far (or the highest retention deleted, when that is higher: `workspace_row_floors`) plus the row's place among the
 * statement's rows of that workspace. The statement reads the table it writes, so SQLite evaluates its rows before
 * inserting any, and D1 runs one batch at a time.
 */
const workspaceSeq = (table: string, workspace: string, key: string) =>
  `MAX(
      COALESCE((SELECT MAX(numbered.workspace_seq) FROM ${table} AS numbered WHERE numbered.workspace_id = ${workspace}), 0),
      COALESCE((SELECT floors.floor FROM workspace_row_floors AS floors
        WHERE floors.workspace_id = ${workspace} AND floors.table_name = '${table}'), 0)
    ) + ROW_NUMBER() OVER (PARTITION BY ${workspace} ORDER BY ${key})`;

/**
 * Every call row of a batch in one statement; a row already there (a redelivery) is skipped, and so is its rollup.
 * Only that conflict is skipped: a clash of workspace numbers fails the batch, which the queue retries.
 */
const INSERT_CALLS = `INSERT INTO calls (${CALL_COLUMNS.join(", ")}, workspace_seq)
  SELECT ${CALL_COLUMNS.map((_, index) => `json_extract(value, '$[${index}]')`).join(", ")},
    ${workspaceSeq("calls", "json_extract(value, '$[0]')", "key")}
  FROM json_each(?1) WHERE true
  ORDER BY key
  ON CONFLICT (workspace_id, request_id, kind, call_index) DO NOTHING`;

/** One stage row as a JSON array, in the order INSERT_STAGES reads. */
function stageValues(call: CallRow, row: StageRow, seq: number) {
  const details = row.details ? JSON.stringify(row.details) : null;
  return [
    call.workspaceId,
    row.toolUid,
    row.requestId,
    row.callIndex ?? null,
    seq,
    row.stage,
    row.channel,
    row.outcome,
    row.code,
    row.durationMs,
    row.revisionId,
    row.shadowDiffered === null ? null : row.shadowDiffered ? 1 : 0,
    call.actor,
    details,
    details === null ? 0 : utf8(details),
    call.startedAt,
  ];
}

/**
 * Every stage row of a batch in one statement. Captured details count against the workspace's rolling allowance:
 * a row keeps its details while the workspace's usage in the window plus the details of the batch's rows up to and
 * including it stay within LOG_DETAIL_ALLOWANCE_BYTES; after that it stores the `log_detail_allowance` marker.
 * The usage is read once for the statement, batches are serialised by D1, and a trigger adds a row's bytes only when
 * the row is really inserted, so a redelivered batch spends nothing and concurrent batches cannot both spend the
 * last bytes.
 */
const INSERT_STAGES = `INSERT INTO call_logs (workspace_id, tool_uid, request_id, call_index, row_seq, stage, channel, outcome, code,
    duration_ms, revision_id, shadow_differed, actor, details, detail_bytes, created_at, workspace_seq)
  SELECT r.ws, r.tool, r.rid, r.ci, r.seq, r.stage, r.channel, r.outcome, r.code, r.ms, r.rev, r.differed, r.actor,
    CASE WHEN r.bytes = 0 THEN NULL WHEN COALESCE(u.used, 0) + r.running <= ?3 THEN r.details
      ELSE json_object('limited', json_object('code', 'log_detail_allowance', 'bytes', r.bytes)) END,
    CASE WHEN r.bytes > 0 AND COALESCE(u.used, 0) + r.running <= ?3 THEN r.bytes ELSE 0 END,
    r.at,
    ${workspaceSeq("call_logs", "r.ws", "r.key")}
  FROM (
    SELECT json_extract(value, '$[0]') AS ws, json_extract(value, '$[1]') AS tool, json_extract(value, '$[2]') AS rid,
      json_extract(value, '$[3]') AS ci, json_extract(value, '$[4]') AS seq, json_extract(value, '$[5]') AS stage,
      json_extract(value, '$[6]') AS channel, json_extract(value, '$[7]') AS outcome, json_extract(value, '$[8]') AS code,
      json_extract(value, '$[9]') AS ms, json_extract(value, '$[10]') AS rev, json_extract(value, '$[11]') AS differed,
      json_extract(value, '$[12]') AS actor, json_extract(value, '$[13]') AS details, json_extract(value, '$[14]') AS bytes,
      json_extract(value, '$[15]') AS at, key,
      SUM(json_extract(value, '$[14]')) OVER (PARTITION BY json_extract(value, '$[0]') ORDER BY key ROWS UNBOUNDED PRECEDING) AS running
    FROM json_each(?1)
  ) AS r
  LEFT JOIN (SELECT workspace_id, SUM(bytes) AS used FROM log_detail_usage WHERE hour > ?2 GROUP BY workspace_id) AS u
    ON u.workspace_id = r.ws
  WHERE true
  ORDER BY r.key
  ON CONFLICT (workspace_id, request_id, COALESCE(call_index, -1), row_seq) WHERE row_seq IS NOT NULL DO NOTHING`;

/** JSON arrays of values, as few as the statement bound allows. */
function* jsonChunks(rows: unknown[][]): Generator<string> {
  let chunk: string[] = [];
  let bytes = 2;
  for (const row of rows) {
    const json = JSON.stringify(row);
    const size = utf8(json) + 1;
    if (chunk.length && bytes + size > STATEMENT_JSON_BYTES) {
      yield `[${chunk.join(",")}]`;
      chunk = [];
      bytes = 2;
    }
    chunk.push(json);
    bytes += size;
  }
  if (chunk.length) yield `[${chunk.join(",")}]`;
}

/** The statements that write a batch of messages into one database: usually two, one when no hook ran. */
export function callLogStatements(db: D1Database, messages: CallLogMessage[], now = Date.now()): D1PreparedStatement[] {
  const calls = messages.map((message) => callValues(message.call));
  const stages = messages.flatMap((message) => message.stages.map((row, seq) => stageValues(message.call, row, seq)));
  const windowStart = usageHour(new Date(now).toISOString()) - LOG_DETAIL_WINDOW_HOURS;
  return [
    ...[...jsonChunks(calls)].map((json) => db.prepare(INSERT_CALLS).bind(json)),
    ...[...jsonChunks(stages)].map((json) => db.prepare(INSERT_STAGES).bind(json, windowStart, LOG_DETAIL_ALLOWANCE_BYTES)),
  ];
}

/**
 * Writes a batch: per database, every statement in one D1 batch, which is one transaction. It either lands whole
 * or not at all, and a redelivery of what landed adds nothing (calls_once, call_logs_once).
 */
export async function writeCallLogs(env: Env, messages: CallLogMessage[]): Promise<void> {
  const byDatabase = new Map<D1Database, CallLogMessage[]>();
  for (const message of messages) {
    const db = logDatabase(env, message.call.workspaceId);
    byDatabase.set(db, [...(byDatabase.get(db) ?? []), message]);
  }
  for (const [db, group] of byDatabase) await db.batch(callLogStatements(db, group));
}
