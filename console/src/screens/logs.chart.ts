// Outcomes and p50/p99 duration per minute, from the rows in view.
import type { Schemas } from "../api.ts";

export interface ChartSeries {
  /** Bucket starts, in seconds (uPlot's x unit). */
  times: number[];
  ok: number[];
  notOk: number[];
  p50: number[];
  p99: number[];
}

const BUCKET_MS = 60_000;

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function chartSeries(logs: Schemas["CallLog"][]): ChartSeries {
  const buckets = new Map<number, Schemas["CallLog"][]>();
  for (const row of logs) {
    const start = Math.floor(Date.parse(row.createdAt) / BUCKET_MS) * BUCKET_MS;
    buckets.set(start, [...(buckets.get(start) ?? []), row]);
  }
  const series: ChartSeries = { times: [], ok: [], notOk: [], p50: [], p99: [] };
  for (const start of [...buckets.keys()].sort((a, b) => a - b)) {
    const rows = buckets.get(start)!;
    const durations = rows.map((r) => r.durationMs).sort((a, b) => a - b);
    series.times.push(start / 1000);
    series.ok.push(rows.filter((r) => r.code === null).length);
    series.notOk.push(rows.filter((r) => r.code !== null).length);
    series.p50.push(percentile(durations, 50));
    series.p99.push(percentile(durations, 99));
  }
  return series;
}
