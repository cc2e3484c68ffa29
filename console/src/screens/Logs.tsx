import { useEffect, useState } from "preact/hooks";
import { api, call, type Schemas } from "../api.ts";
import { json, when } from "../ui/format.ts";
import { useLoad } from "../ui/load.ts";
import { Empty, ErrorNote, Loading } from "../ui/status.tsx";
import { LogsChart } from "./LogsChart.tsx";
import type { ScreenProps } from "./screen.ts";

type Query = NonNullable<Parameters<typeof loadLogs>[2]>;
const POLL_MS = 3000;
const STAGES = ["before", "after", "pre_dispatch", "upstream"] as const;
const CHANNELS = ["active", "shadow"] as const;

async function loadLogs(
  ws: string,
  toolUid: string,
  query: {
    stage?: (typeof STAGES)[number];
    channel?: (typeof CHANNELS)[number];
    outcome?: string;
    requestId?: string;
    since?: string;
    until?: string;
  },
) {
  const page = await call(
    api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/logs", { params: { path: { ws, toolUid }, query: { ...query, limit: 200 } } }),
  );
  // The route answers JSON lines (a string) only when asked with format=jsonl, which the console never does.
  if (typeof page === "string") throw new Error("The logs route answered JSON lines instead of JSON");
  return page.logs;
}

/** `<input type="datetime-local">` gives local time without a zone; the API takes ISO instants. */
const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);

export function Logs({ ws }: ScreenProps) {
  const tools = useLoad(async () => (await call(api.GET("/v1/workspaces/{ws}/tools", { params: { path: { ws } } }))).tools, [ws]);
  const [toolUid, setToolUid] = useState("");
  const [filters, setFilters] = useState({ stage: "", channel: "", outcome: "", requestId: "", since: "", until: "" });
  const selected = toolUid || tools.data?.[0]?.uid || "";
  const query: Query = {
    ...(filters.stage ? { stage: filters.stage as Query["stage"] } : {}),
    ...(filters.channel ? { channel: filters.channel as Query["channel"] } : {}),
    ...(filters.outcome ? { outcome: filters.outcome } : {}),
    ...(filters.requestId ? { requestId: filters.requestId } : {}),
    ...(filters.since ? { since: instant(filters.since) } : {}),
    ...(filters.until ? { until: instant(filters.until) } : {}),
  };
  const logs = useLoad(async () => (selected ? loadLogs(ws, selected, query) : []), [ws, selected, JSON.stringify(query)]);
  useEffect(() => {
    const timer = setInterval(logs.reload, POLL_MS);
    return () => clearInterval(timer);
  }, [logs.reload]);
  const width = Math.min(1000, Math.max(320, (typeof innerWidth === "number" ? innerWidth : 1000) - 260));
  const set = (key: keyof typeof filters) => (e: { currentTarget: { value: string } }) =>
    setFilters({ ...filters, [key]: e.currentTarget.value });

  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Logs</h1>
      <ErrorNote error={tools.error} />
      {tools.data?.length === 0 && <Empty>No tools, so no logs yet.</Empty>}
      <form class="filters" aria-label="Log filters" onSubmit={(e) => e.preventDefault()}>
        <span class="field">
          <label for="logs-tool">Tool</label>
          <select id="logs-tool" value={selected} onChange={(e) => setToolUid(e.currentTarget.value)}>
            {tools.data?.map((t) => (
              <option key={t.uid} value={t.uid}>
                {t.publicName}
              </option>
            ))}
          </select>
        </span>
        <span class="field">
          <label for="logs-stage">Stage</label>
          <select id="logs-stage" value={filters.stage} onChange={set("stage")}>
            <option value="">any</option>
            {STAGES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </span>
        <span class="field">
          <label for="logs-channel">Channel</label>
          <select id="logs-channel" value={filters.channel} onChange={set("channel")}>
            <option value="">any</option>
            {CHANNELS.map((c) => (
              <option key={c}>{c}</option>
            ))}
          </select>
        </span>
        <label>
          Outcome
          <input size={12} value={filters.outcome} onChange={set("outcome")} />
        </label>
        <label>
          Request id
          <input size={24} value={filters.requestId} onChange={set("requestId")} />
        </label>
        <label>
          Since
          <input type="datetime-local" value={filters.since} onChange={set("since")} />
        </label>
        <label>
          Until
          <input type="datetime-local" value={filters.until} onChange={set("until")} />
        </label>
      </form>
      <ErrorNote error={logs.error} />
      {logs.loading && !logs.data && <Loading what="logs" />}
      {logs.data && logs.data.length > 0 && <LogsChart logs={logs.data} width={width} />}
      {logs.data?.length === 0 && selected && <Empty>No stage runs match.</Empty>}
      {logs.data && logs.data.length > 0 && <LogTable logs={logs.data} />}
    </section>
  );
}

function LogTable({ logs }: { logs: Schemas["CallLog"][] }) {
  return (
    <div class="table-wrap">
      <table aria-label="Stage runs">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Request id</th>
            <th scope="col">Stage</th>
            <th scope="col">Channel</th>
            <th scope="col">Outcome</th>
            <th scope="col">Duration</th>
            <th scope="col">Revision</th>
            <th scope="col">Shadow differed</th>
          </tr>
        </thead>
        <tbody>
          {logs.map((row) => (
            <tr key={row.id} class={row.shadowDiffered ? "highlight" : undefined}>
              <td>{when(row.createdAt)}</td>
              <td>
                <code>{row.requestId}</code>
              </td>
              <td>{row.stage}</td>
              <td>{row.channel}</td>
              <td>
                {row.outcome}
                {row.code && <span class="error"> {row.code}</span>}
                {row.details && (
                  <details>
                    <summary>Payload details</summary>
                    <pre tabIndex={0}>{json(row.details)}</pre>
                  </details>
                )}
              </td>
              <td>{row.durationMs.toFixed(1)} ms</td>
              <td>{row.revisionId ?? "—"}</td>
              <td>{row.shadowDiffered === null ? "—" : row.shadowDiffered ? <strong>differed</strong> : "same"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
