// Calls per minute by outcome and p50/p99, as uPlot series, from GET …/metrics (the per-minute rollups).
import type { Schemas } from "../api.ts";

export interface ChartSeries {
  /** Step starts, in seconds (uPlot's x unit). */
  times: number[];
  ok: number[];
  notOk: number[];
  p50: (number | null)[];
  p99: (number | null)[];
}

/** Outcomes that count as the call going through. */
const SUCCEEDED = new Set(["ok", "approved"]);

export function chartSeries(points: Schemas["Metrics"]["points"]): ChartSeries {
  const series: ChartSeries = { times: [], ok: [], notOk: [], p50: [], p99: [] };
  for (const point of points) {
    const ok = Object.entries(point.outcomes).reduce((sum, [outcome, count]) => sum + (SUCCEEDED.has(outcome) ? count : 0), 0);
    series.times.push(Date.parse(point.at) / 1000);
    series.ok.push(ok);
    series.notOk.push(point.calls - ok);
    series.p50.push(point.p50Ms);
    series.p99.push(point.p99Ms);
  }
  return series;
}
