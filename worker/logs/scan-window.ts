import { logWhere } from "./log-filter.ts";

/**
 * Rows of its own index a log page reads at most to find its rows when a filter is not in the index (an outcome, an
 * actor, a time window, a kind). Without the bound, a filter matching nothing read every row the workspace had, up
 * to millions, on the database every workspace shares; with it, such a page ends after this many and says where to
 * go on (`nextCursor`), so a page may hold fewer rows than asked, or none, and still have a next one.
 */
export const LOG_SCAN_ROWS = 10_000;

/**
 * How long after its call started a row may land (calls last up to 10 minutes, the queue retries for a few more, a
 * backlog adds to that): a page whose scan ended on a row older than `since` by more than this ends the listing, as
 * every row below it landed earlier and so started before `since`.
 */
export const ROW_LANDING_SLACK_MS = 24 * 60 * 60 * 1000;

type Clause = [clause: string, value: string | number | readonly string[] | undefined];

/** One page of a log list: the index-led scope (workspace, then tool or request), and the filters read row by row. */
export interface ScanQuery {
  table: "calls" | "call_logs";
  scope: Clause[];
  filters: Clause[];
  /** Rows with a smaller number than this (the previous page's cursor). */
  before?: number;
  since?: string;
  limit: number;
}

export interface ScanStatements {
  page: D1PreparedStatement;
  /** The last row the page's scan may read, when its filters make it scan; null when the index serves them all. */
  floor: D1PreparedStatement | null;
}

/**
 * The statements of one page. Filters the index serves read the page's rows and no more; any other filter reads
 * the newest LOG_SCAN_ROWS rows of the scope below the cursor, and `floor` finds the last of them.
 */
export function scanStatements(db: D1Database, query: ScanQuery): ScanStatements {
  const scope = logWhere([], [...query.scope, ["workspace_seq < ?", query.before]]);
  const filters = logWhere([], query.filters);
  if (!filters.where) {
    return {
      page: db
        .prepare(`SELECT * FROM ${query.table} WHERE ${scope.where} ORDER BY workspace_seq DESC LIMIT ?`)
        .bind(...scope.params, query.limit),
      floor: null,
    };
  }
  // A subquery with a LIMIT under an outer WHERE is never flattened into it: the window is read first, then filtered.
  const window = `SELECT * FROM ${query.table} WHERE ${scope.where} ORDER BY workspace_seq DESC LIMIT ${LOG_SCAN_ROWS}`;
  return {
    page: db
      .prepare(`SELECT * FROM (${window}) WHERE ${filters.where} ORDER BY workspace_seq DESC LIMIT ?`)
      .bind(...scope.params, ...filters.params, query.limit),
    floor: db
      .prepare(
        `SELECT workspace_seq AS seq, created_at FROM ${query.table} WHERE ${scope.where}
         ORDER BY workspace_seq DESC LIMIT 1 OFFSET ${LOG_SCAN_ROWS - 1}`,
      )
      .bind(...scope.params),
  };
}

/**
 * A page's rows, and where the next one starts when its scan ended before the page filled (`resumeBelow`; null
 * when the rows end here). A full page's next one starts below its last row, as always.
 */
export async function readScannedPage<Row>(db: D1Database, query: ScanQuery): Promise<{ rows: Row[]; resumeBelow: number | null }> {
  const statements = scanStatements(db, query);
  const rows = (await statements.page.all<Row>()).results;
  // A full page goes on below its last row; only a short one asks where its scan ended (a read of the whole window).
  if (!statements.floor || rows.length === query.limit) return { rows, resumeBelow: null };
  const last = await statements.floor.first<{ seq: number; created_at: string }>();
  if (!last) return { rows, resumeBelow: null };
  if (query.since !== undefined && Date.parse(last.created_at) < Date.parse(query.since) - ROW_LANDING_SLACK_MS) {
    return { rows, resumeBelow: null };
  }
  return { rows, resumeBelow: last.seq };
}
