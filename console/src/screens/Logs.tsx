import { useEffect, useState } from "preact/hooks";
import { api, call, type Schemas } from "../api.ts";
import { bytes, when } from "../ui/format.ts";
import { useLoad } from "../ui/load.ts";
import { Empty, ErrorNote, Loading } from "../ui/status.tsx";
import { CallDetail } from "./CallDetail.tsx";
import { MetricsChart } from "./MetricsChart.tsx";
import type { ScreenProps } from "./screen.ts";

type Call = Schemas["Call"];
type Query = NonNullable<Parameters<typeof loadCalls>[1]>;
const POLL_MS = 3000;
const PAGE = 100;
const KINDS = ["tools/call", "resources/read", "prompts/get", "run_code"] as const;
const OUTCOMES = [
  "ok",
  "approved",
  "upstream_error",
  "upstream_failed",
  "refused",
  "hidden",
  "cancelled",
  "approval_required",
  "timed_out",
  "error",
] as const;

async function loadCalls(
  ws: string,
  query: {
    kind?: (typeof KINDS)[number];
    tool?: string;
    actor?: string;
    outcome?: (typeof OUTCOMES)[number];
    code?: string;
    requestId?: string;
    since?: string;
    until?: string;
  },
  cursor?: string,
) {
  const page = await call(api.GET("/v1/workspaces/{ws}/logs", { params: { path: { ws }, query: { ...query, limit: PAGE, cursor } } }));
  // The route answers JSON lines (a string) only when asked with format=jsonl, which the console never does.
  if (typeof page === "string") throw new Error("The logs route answered JSON lines instead of JSON");
  return page;
}

/** `<input type="datetime-local">` gives local time without a zone; the API takes ISO instants. */
const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);

/** Key names for the actor column; a viewer who may not list keys sees the raw actor. */
function useKeyNames(ws: string) {
  return useLoad(async () => {
    try {
      const { keys } = await call(api.GET("/v1/workspaces/{ws}/keys", { params: { path: { ws } } }));
      return new Map(keys.map((key) => [`key:${key.id}`, key.name]));
    } catch {
      return new Map<string, string>();
    }
  }, [ws]);
}

export function Logs({ ws }: ScreenProps) {
  const tools = useLoad(async () => (await call(api.GET("/v1/workspaces/{ws}/tools", { params: { path: { ws } } }))).tools, [ws]);
  const keyNames = useKeyNames(ws);
  const [filters, setFilters] = useState({ kind: "", tool: "", actor: "", outcome: "", code: "", requestId: "", since: "", until: "" });
  const [open, setOpen] = useState<string | null>(null);
  const [older, setOlder] = useState<{ calls: Call[]; nextCursor: string | null } | null>(null);
  const query: Query = {
    ...(filters.kind ? { kind: filters.kind as Query["kind"] } : {}),
    ...(filters.tool ? { tool: filters.tool } : {}),
    ...(filters.actor ? { actor: filters.actor } : {}),
    ...(filters.outcome ? { outcome: filters.outcome as Query["outcome"] } : {}),
    ...(filters.code ? { code: filters.code } : {}),
    ...(filters.requestId ? { requestId: filters.requestId } : {}),
    ...(filters.since ? { since: instant(filters.since) } : {}),
    ...(filters.until ? { until: instant(filters.until) } : {}),
  };
  const key = JSON.stringify(query);
  const latest = useLoad(() => loadCalls(ws, query), [ws, key]);
  useEffect(() => setOlder(null), [ws, key]);
  useEffect(() => {
    const timer = setInterval(latest.reload, POLL_MS);
    return () => clearInterval(timer);
  }, [latest.reload]);
  const set = (name: keyof typeof filters) => (e: { currentTarget: { value: string } }) =>
    setFilters({ ...filters, [name]: e.currentTarget.value });
  const toolName = (uid: string | null) => tools.data?.find((t) => t.uid === uid)?.publicName;
  const actorName = (actor: string) => keyNames.data?.get(actor) ?? actor;
  // The newest page polls; pages loaded further back are kept below it (rows never change once written).
  const newestIds = new Set(latest.data?.calls.map((c) => c.id));
  const calls = [...(latest.data?.calls ?? []), ...(older?.calls.filter((c) => !newestIds.has(c.id)) ?? [])];
  const nextCursor = older ? older.nextCursor : (latest.data?.nextCursor ?? null);

  async function loadOlder() {
    if (!nextCursor) return;
    const page = await loadCalls(ws, query, nextCursor);
    setOlder({ calls: [...(older?.calls ?? []), ...page.calls], nextCursor: page.nextCursor });
  }

  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Logs</h1>
      <MetricsChart ws={ws} tool={filters.tool || undefined} label="Chart of calls per minute by outcome and p50/p99 duration" />
      <form class="filters" aria-label="Log filters" onSubmit={(e) => e.preventDefault()}>
        <span class="field">
          <label for="logs-kind">Kind</label>
          <select id="logs-kind" value={filters.kind} onChange={set("kind")}>
            <option value="">any</option>
            {KINDS.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </span>
        <span class="field">
          <label for="logs-tool">Tool</label>
          <select id="logs-tool" value={filters.tool} onChange={set("tool")}>
            <option value="">any</option>
            {tools.data?.map((t) => (
              <option key={t.uid} value={t.uid}>
                {t.publicName}
              </option>
            ))}
          </select>
        </span>
        <span class="field">
          <label for="logs-actor">Key</label>
          <select id="logs-actor" value={filters.actor} onChange={set("actor")}>
            <option value="">any</option>
            {[...(keyNames.data ?? new Map<string, string>())].map(([actor, name]) => (
              <option key={actor} value={actor}>
                {name}
              </option>
            ))}
          </select>
        </span>
        <span class="field">
          <label for="logs-outcome">Outcome</label>
          <select id="logs-outcome" value={filters.outcome} onChange={set("outcome")}>
            <option value="">any</option>
            {OUTCOMES.map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
        </span>
        <label>
          Code
          <input size={16} value={filters.code} onChange={set("code")} />
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
      <ErrorNote error={tools.error ?? latest.error} />
      {latest.loading && !latest.data && <Loading what="calls" />}
      {latest.data && calls.length === 0 && (
        // A page reads at most the newest 10,000 calls below it (docs/logs.md): with a cursor left, older calls may match.
        <Empty>{nextCursor ? "None of the newest calls searched match; load older calls to search further." : "No calls match."}</Empty>
      )}
      {calls.length > 0 && (
        <div class="table-wrap">
          <table aria-label="Calls">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Kind</th>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Outcome</th>
                <th scope="col">Duration</th>
                <th scope="col">Bytes in / out</th>
                <th scope="col">Shadow</th>
                <th scope="col">Request id</th>
              </tr>
            </thead>
            <tbody>
              {calls.map((row) => (
                <tr key={row.id} class={row.shadow === "differed" ? "highlight" : undefined}>
                  <td>{when(row.createdAt)}</td>
                  <td>
                    {row.kind}
                    {row.callIndex !== null && <span class="muted"> #{row.callIndex}</span>}
                  </td>
                  <td>{toolName(row.toolUid) ?? row.name}</td>
                  <td>{actorName(row.actor)}</td>
                  <td>
                    {row.outcome}
                    {row.code && <span class="error"> {row.code}</span>}
                  </td>
                  <td>{row.durationMs.toFixed(1)} ms</td>
                  <td>
                    {bytes(row.bytesIn)} / {bytes(row.bytesOut)}
                  </td>
                  <td>{row.shadow ?? "—"}</td>
                  <td>
                    <button type="button" class="link" aria-label={`Open ${row.requestId}`} onClick={() => setOpen(row.requestId)}>
                      <code>{row.requestId}</code>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {nextCursor && (
        <button type="button" onClick={() => void loadOlder()}>
          Load older calls
        </button>
      )}
      {open && <CallDetail ws={ws} requestId={open} actorName={actorName} onClose={() => setOpen(null)} />}
    </section>
  );
}
