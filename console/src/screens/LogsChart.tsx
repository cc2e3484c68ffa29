import { useEffect, useRef } from "preact/hooks";
import type UPlotChart from "uplot";
import type { Schemas } from "../api.ts";
import { chartSeries } from "./logs.chart.ts";

/** uPlot, loaded with the first chart so the initial bundle stays small. */
export function LogsChart({ logs, width }: { logs: Schemas["CallLog"][]; width: number }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let disposed = false;
    let chart: UPlotChart | undefined;
    void Promise.all([import("uplot"), import("uplot/dist/uPlot.min.css")]).then(([{ default: UPlot }]) => {
      if (disposed || !host.current) return;
      const s = chartSeries(logs);
      chart = new UPlot(
        {
          width,
          height: 220,
          scales: {
            x: { time: true },
            count: { range: (_chart, _min, max) => [0, Math.max(2, max)] },
            ms: { range: (_chart, _min, max) => [0, Math.max(1, max)] },
          },
          axes: [{}, { scale: "count", label: "calls" }, { scale: "ms", side: 1, label: "ms", grid: { show: false } }],
          series: [
            {},
            { label: "ok", scale: "count", stroke: "#1a7f37", width: 2 },
            { label: "refused or failed", scale: "count", stroke: "#b42318", width: 2 },
            { label: "p50 ms", scale: "ms", stroke: "#0b57d0", dash: [4, 4] },
            { label: "p99 ms", scale: "ms", stroke: "#6d28d9", dash: [8, 4] },
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
  }, [logs, width]);
  return <div ref={host} role="img" aria-label="Chart of outcomes per minute and p50/p99 duration" />;
}
