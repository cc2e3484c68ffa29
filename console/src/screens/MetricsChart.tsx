import { useEffect, useRef } from "preact/hooks";
import type UPlotChart from "uplot";
import { api, call, type Schemas } from "../api.ts";
import { useLoad } from "../ui/load.ts";
import { ErrorNote } from "../ui/status.tsx";
import { chartColors, useTheme } from "../ui/theme.ts";
import { chartSeries } from "./metrics.chart.ts";

const REFRESH_MS = 10_000;

/** The last hour of a workspace's (or one tool's) calls per minute, from the rollups; refreshed every 10 s. */
export function useMetrics(ws: string, tool?: string) {
  const metrics = useLoad(
    () => call(api.GET("/v1/workspaces/{ws}/metrics", { params: { path: { ws }, query: { step: 1, ...(tool ? { tool } : {}) } } })),
    [ws, tool],
  );
  useEffect(() => {
    const timer = setInterval(metrics.reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [metrics.reload]);
  return metrics;
}

/** Calls per minute (went through, refused or failed) and p50/p99 duration. */
export function MetricsChart({ ws, tool, label }: { ws: string; tool?: string; label: string }) {
  const metrics = useMetrics(ws, tool);
  const width = Math.min(1000, Math.max(320, (typeof innerWidth === "number" ? innerWidth : 1000) - 260));
  return (
    <figure class="metrics">
      <ErrorNote error={metrics.error} />
      {metrics.data && <Chart points={metrics.data.points} width={width} label={label} />}
      {metrics.data && <Summary totals={metrics.data.totals} />}
    </figure>
  );
}

export function Summary({ totals }: { totals: Schemas["Metrics"]["totals"] }) {
  const ms = (value: number | null) => (value === null ? "—" : `${value.toFixed(1)} ms`);
  const outcomes = Object.entries(totals.outcomes)
    .map(([outcome, count]) => `${count} ${outcome}`)
    .join(", ");
  return (
    <figcaption class="muted" aria-label="Calls in the last hour">
      Last hour: {totals.calls} calls{outcomes ? ` (${outcomes})` : ""}; p50 {ms(totals.p50Ms)}, p99 {ms(totals.p99Ms)}
      {totals.lost ? `; ${totals.lost} rows lost (queue unavailable)` : ""}
    </figcaption>
  );
}

/** uPlot, loaded with the first chart so the initial bundle stays small. */
function Chart({ points, width, label }: { points: Schemas["Metrics"]["points"]; width: number; label: string }) {
  const host = useRef<HTMLDivElement>(null);
  // Drawn again in the other theme's colours when it changes (a canvas does not read CSS).
  const { theme } = useTheme();
  useEffect(() => {
    let disposed = false;
    let chart: UPlotChart | undefined;
    void Promise.all([import("uplot"), import("uplot/dist/uPlot.min.css")]).then(([{ default: UPlot }]) => {
      if (disposed || !host.current) return;
      const s = chartSeries(points);
      const colors = chartColors();
      const axis = { stroke: colors.text, grid: { stroke: colors.grid }, ticks: { stroke: colors.grid } };
      chart = new UPlot(
        {
          width,
          height: 220,
          scales: {
            x: { time: true },
            count: { range: (_chart, _min, max) => [0, Math.max(2, max)] },
            ms: { range: (_chart, _min, max) => [0, Math.max(1, max)] },
          },
          axes: [
            axis,
            { ...axis, scale: "count", label: "calls / min" },
            { ...axis, scale: "ms", side: 1, label: "ms", grid: { show: false } },
          ],
          series: [
            {},
            { label: "ok", scale: "count", stroke: colors.ok, width: 2 },
            { label: "refused or failed", scale: "count", stroke: colors.bad, width: 2 },
            { label: "p50 ms", scale: "ms", stroke: colors.accent, dash: [4, 4], spanGaps: false },
            { label: "p99 ms", scale: "ms", stroke: colors.other, dash: [8, 4], spanGaps: false },
          ],
        },
        [s.times, s.ok, s.notOk, s.p50, s.p99],
        host.current,
      );
    });
    return () => {
      disposed = true;
      chart?.destroy();
    };
  }, [points, width, theme]);
  return <div ref={host} role="img" aria-label={label} />;
}
