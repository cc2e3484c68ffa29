import { useEffect, useRef } from "preact/hooks";
import type UPlotChart from "uplot";
import type { Schemas } from "../api.ts";
import { chartColors, useTheme } from "../ui/theme.ts";
import { chartSeries } from "./logs.chart.ts";

/** uPlot, loaded with the first chart so the initial bundle stays small. */
export function LogsChart({ logs, width }: { logs: Schemas["CallLog"][]; width: number }) {
  const host = useRef<HTMLDivElement>(null);
  // Drawn again in the other theme's colours when it changes (a canvas does not read CSS).
  const { theme } = useTheme();
  useEffect(() => {
    let disposed = false;
    let chart: UPlotChart | undefined;
    void Promise.all([import("uplot"), import("uplot/dist/uPlot.min.css")]).then(([{ default: UPlot }]) => {
      if (disposed || !host.current) return;
      const s = chartSeries(logs);
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
          axes: [axis, { ...axis, scale: "count", label: "calls" }, { ...axis, scale: "ms", side: 1, label: "ms", grid: { show: false } }],
          series: [
            {},
            { label: "ok", scale: "count", stroke: colors.ok, width: 2 },
            { label: "refused or failed", scale: "count", stroke: colors.bad, width: 2 },
            { label: "p50 ms", scale: "ms", stroke: colors.accent, dash: [4, 4] },
            { label: "p99 ms", scale: "ms", stroke: colors.other, dash: [8, 4] },
          ],
        },
        [s.times, s.ok, s.notOk, s.p50, s.p99],
        host.current,
      );
      // At least ten minutes wide, so a first few calls do not stretch the time axis over years.
      const last = s.times[s.times.length - 1] ?? Date.now() / 1000;
      chart.setScale("x", { min: Math.min(s.times[0] ?? last, last - 600), max: last + 60 });
    });
    return () => {
      disposed = true;
      chart?.destroy();
    };
  }, [logs, width, theme]);
  return <div ref={host} role="img" aria-label="Chart of outcomes per minute and p50/p99 duration" />;
}
