import { CALL_OUTCOMES } from "../../schema/api/logs.ts";
import type { CallKind, CallRowOutcome } from "./call-log.ts";
import { DURATION_BUCKETS, percentile } from "./histogram.ts";
import { logWhere } from "./log-filter.ts";

export interface MetricsQuery {
  /** Minutes since the Unix epoch, [from, to). */
  fromMinute: number;
  toMinute: number;
  stepMinutes: number;
  kind?: CallKind;
  tool?: string;
  actor?: string;
}

export type OutcomeCounts = Partial<Record<CallRowOutcome, number>>;

export interface MetricsPoint {
  /** The start of the step (ISO 8601). */
  at: string;
  calls: number;
  outcomes: OutcomeCounts;
  p50Ms: number | null;
  p99Ms: number | null;
  bytesIn: number;
  bytesOut: number;
  /** Call-log messages the gateway could not queue in this step (workspace-wide, whatever the filters). */
  lost: number;
}

export interface Metrics {
  stepMinutes: number;
  points: MetricsPoint[];
  totals: Omit<MetricsPoint, "at">;
}

interface OutcomeRow {
  slot: number;
  outcome: CallRowOutcome;
  calls: number;
  bytes_in: number;
  bytes_out: number;
}

interface BucketRow {
  slot: number;
  bucket: number;
  calls: number;
}

const emptyHistogram = () => new Array<number>(DURATION_BUCKETS).fill(0);

/**
 * Calls per step by outcome, p50/p99 from the summed duration histograms, and bytes, from the per-minute rollups
 * only (never the rows): three grouped reads whatever the number of calls. Steps without calls are present, zero.
 */
export async function queryMetrics(db: D1Database, workspaceId: string, query: MetricsQuery): Promise<Metrics> {
  const { fromMinute, toMinute, stepMinutes } = query;
  const { where, params } = logWhere(
    [["workspace_id = ?", workspaceId]],
    [
      ["minute >= ?", fromMinute],
      ["minute < ?", toMinute],
      ["kind = ?", query.kind],
      ["tool_uid = ?", query.tool],
      ["actor = ?", query.actor],
    ],
  );
  // The step a minute falls in; its two numbers are bound like every other value.
  const slot = "CAST((minute - ?) / ? AS INTEGER)";
  const [outcomes, buckets, losses] = await db.batch<Record<string, unknown>>([
    db
      .prepare(
        `SELECT ${slot} AS slot, outcome, SUM(calls) AS calls, SUM(bytes_in) AS bytes_in, SUM(bytes_out) AS bytes_out
         FROM call_rollups WHERE ${where} GROUP BY slot, outcome`,
      )
      .bind(fromMinute, stepMinutes, ...params),
    db
      .prepare(`SELECT ${slot} AS slot, bucket, SUM(calls) AS calls FROM call_rollups WHERE ${where} GROUP BY slot, bucket`)
      .bind(fromMinute, stepMinutes, ...params),
    db
      .prepare(
        `SELECT ${slot} AS slot, SUM(lost) AS lost FROM call_log_losses WHERE workspace_id = ? AND minute >= ? AND minute < ? GROUP BY slot`,
      )
      .bind(fromMinute, stepMinutes, workspaceId, fromMinute, toMinute),
  ]);
  const steps = Math.ceil((toMinute - fromMinute) / stepMinutes);
  const points = Array.from({ length: steps }, (_, index) => ({
    at: new Date((fromMinute + index * stepMinutes) * 60_000).toISOString(),
    calls: 0,
    outcomes: {} as OutcomeCounts,
    histogram: emptyHistogram(),
    bytesIn: 0,
    bytesOut: 0,
    lost: 0,
  }));
  for (const row of (outcomes?.results ?? []) as unknown as OutcomeRow[]) {
    const point = points[row.slot];
    if (!point || !CALL_OUTCOMES.includes(row.outcome)) continue;
    point.calls += row.calls;
    point.outcomes[row.outcome] = (point.outcomes[row.outcome] ?? 0) + row.calls;
    point.bytesIn += row.bytes_in;
    point.bytesOut += row.bytes_out;
  }
  for (const row of (buckets?.results ?? []) as unknown as BucketRow[]) {
    const point = points[row.slot];
    if (point && row.bucket >= 0 && row.bucket < DURATION_BUCKETS) point.histogram[row.bucket]! += row.calls;
  }
  for (const row of (losses?.results ?? []) as unknown as { slot: number; lost: number }[]) {
    const point = points[row.slot];
    if (point) point.lost += row.lost;
  }
  const total = { calls: 0, outcomes: {} as OutcomeCounts, histogram: emptyHistogram(), bytesIn: 0, bytesOut: 0, lost: 0 };
  for (const point of points) {
    total.calls += point.calls;
    for (const [outcome, count] of Object.entries(point.outcomes) as [CallRowOutcome, number][]) {
      total.outcomes[outcome] = (total.outcomes[outcome] ?? 0) + count;
    }
    point.histogram.forEach((count, bucket) => (total.histogram[bucket]! += count));
    total.bytesIn += point.bytesIn;
    total.bytesOut += point.bytesOut;
    total.lost += point.lost;
  }
  const summary = ({ histogram, ...rest }: typeof total) => ({
    ...rest,
    p50Ms: percentile(histogram, 0.5),
    p99Ms: percentile(histogram, 0.99),
  });
  return {
    stepMinutes,
    points: points.map(({ at, ...rest }) => ({ at, ...summary(rest) })),
    totals: summary(total),
  };
}
