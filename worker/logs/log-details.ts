/**
 * Bounds on the details a call-log row may store (docs/limits.md). A live call
 * never fails because of them: over a bound, the row keeps its metadata and its
 * details say what was cut, under `limited`.
 */

/** The largest details JSON one row stores; past it, fields are shortened and hook logs kept up to the cap. */
export const LOG_DETAIL_ROW_BYTES = 32 * 1024;
/** Captured detail bytes one workspace may store per rolling window; past it, rows keep metadata only. */
export const LOG_DETAIL_ALLOWANCE_BYTES = 32 * 1024 * 1024;
export const LOG_DETAIL_WINDOW_HOURS = 24;

/**
 * The most stage rows one page carries when it includes their details: 100 × LOG_DETAIL_ROW_BYTES is 3.2 MiB.
 * At the API's 1,000 rows a page held up to 32 MiB of details (a day's whole allowance), read from D1, parsed and
 * written out again in one Worker isolate, whose other requests (any workspace's) share its 128 MB; a few such
 * pages at once could exhaust it. A larger `limit` answers this many rows and a `nextCursor` to the rest.
 */
export const LOG_DETAIL_PAGE_ROWS = 100;

/** The rows a stage-row page holds: `limit`, or at most LOG_DETAIL_PAGE_ROWS when it carries details. */
export const stagePageRows = (limit: number, withDetails: boolean) => (withDetails ? Math.min(limit, LOG_DETAIL_PAGE_ROWS) : limit);

/** A text field of a truncated row keeps this many characters. */
const TRUNCATED_TEXT_CHARS = 2_000;
/** Room kept for the `limited` marker itself. */
const MARKER_BYTES = 256;

const encoder = new TextEncoder();
const utf8Bytes = (text: string) => encoder.encode(text).byteLength;

/** The details JSON to store for one row, within LOG_DETAIL_ROW_BYTES. */
export function boundedDetailsJson(details: Record<string, unknown>): { json: string; bytes: number; truncated: boolean } {
  const json = JSON.stringify(details);
  const bytes = utf8Bytes(json);
  if (bytes <= LOG_DETAIL_ROW_BYTES) return { json, bytes, truncated: false };
  const kept: Record<string, unknown> = {};
  let room = LOG_DETAIL_ROW_BYTES - MARKER_BYTES;
  for (const [key, value] of Object.entries(details)) {
    if (key === "logs") continue;
    const shortened = typeof value === "string" && value.length > TRUNCATED_TEXT_CHARS ? `${value.slice(0, TRUNCATED_TEXT_CHARS)}…` : value;
    const size = utf8Bytes(JSON.stringify({ [key]: shortened }));
    if (size > room) continue;
    kept[key] = shortened;
    room -= size;
  }
  // Hook logs are kept in order up to the cap, so a reader sees how the run began.
  const logs = Array.isArray(details.logs) ? details.logs : [];
  const keptLogs: unknown[] = [];
  for (const entry of logs) {
    const size = utf8Bytes(JSON.stringify(entry)) + 1;
    if (size > room) break;
    keptLogs.push(entry);
    room -= size;
  }
  if (keptLogs.length) kept.logs = keptLogs;
  kept.limited = { code: "log_details_truncated", bytes, ...(logs.length ? { logsDropped: logs.length - keptLogs.length } : {}) };
  const truncated = JSON.stringify(kept);
  return { json: truncated, bytes: utf8Bytes(truncated), truncated: true };
}

/** The usage bucket a row written at `createdAt` counts in. */
export const usageHour = (createdAt: string) => Math.floor(Date.parse(createdAt) / 3_600_000);
