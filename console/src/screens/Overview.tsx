import { useState } from "preact/hooks";
import { api, call } from "../api.ts";
import { href, hrefWith } from "../router.ts";
import { useActorNames } from "../ui/actors.ts";
import { CopyButton } from "../ui/CopyButton.tsx";
import { bytes, when } from "../ui/format.ts";
import { useLoad } from "../ui/load.ts";
import { Empty, ErrorNote, Loading } from "../ui/status.tsx";
import { connectSnippets } from "./connect.ts";
import { MetricsChart } from "./MetricsChart.tsx";
import type { ScreenProps } from "./screen.ts";

const LAST_CALLS = 5;
const OK_OUTCOMES = new Set(["ok", "approved"]);

export function Overview({ ws }: ScreenProps) {
  const path = { params: { path: { ws } } };
  const data = useLoad(async () => {
    const [whoami, services, tools, usage] = await Promise.all([
      call(api.GET("/v1/whoami")),
      call(api.GET("/v1/workspaces/{ws}/services", path)),
      call(api.GET("/v1/workspaces/{ws}/tools", path)),
      call(api.GET("/v1/workspaces/{ws}/hooks/usage", path)),
    ]);
    const isAdmin = whoami.workspaces.find((w) => w.id === ws)?.scopes.includes("admin") ?? false;
    // Only admins may read approvals; for others the count is left out rather than failing the page.
    const pending = isAdmin
      ? (await call(api.GET("/v1/workspaces/{ws}/approvals", { params: { path: { ws }, query: { status: "pending", limit: 100 } } })))
          .approvals.length
      : null;
    return { mcpUrl: whoami.mcpUrl, services: services.services, tools: tools.tools, usage, pending };
  }, [ws]);

  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Overview</h1>
      <ErrorNote error={data.error} />
      {data.loading && !data.data && <Loading what="the workspace" />}
      {data.data && (
        <>
          <ul class="stats">
            <li>
              <a href={href(ws, "services")}>{data.data.services.length} services</a>
            </li>
            <li>
              <a href={href(ws, "tools")}>{data.data.tools.length} tools</a>,{" "}
              <a href={hrefWith(ws, "tools", [], { status: "review_required" })}>
                {data.data.tools.filter((t) => t.status === "review_required").length} awaiting review
              </a>
            </li>
            {data.data.pending !== null && (
              <li>
                <a href={href(ws, "approvals")}>{data.data.pending} pending approvals</a>
              </li>
            )}
          </ul>
          <Connect mcpUrl={data.data.mcpUrl} ws={ws} />
          <h2>Calls</h2>
          <MetricsChart ws={ws} label="Chart of the workspace's calls per minute by outcome and p50/p99 duration" />
          <LastCalls ws={ws} />
          <h2>Allowances in use</h2>
          <div class="table-wrap">
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">Allowance</th>
                  <th scope="col">Used</th>
                  <th scope="col">Limit</th>
                  <th scope="col">Share</th>
                </tr>
              </thead>
              <tbody>
                <Allowance label="Deployed code" {...data.data.usage.deployedBytes} format={bytes} />
                <Allowance label="Draft history" {...data.data.usage.historyBytes} format={bytes} />
                <Allowance label="Draft saves" {...data.data.usage.draftSaves} format={String} />
                <Allowance label="Compile attempts" {...data.data.usage.compileAttempts} format={String} />
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

/** The /mcp URL and a snippet per client, each copyable. */
function Connect({ mcpUrl, ws }: { mcpUrl: string; ws: string }) {
  const snippets = connectSnippets(mcpUrl);
  const [shown, setShown] = useState(snippets[0]!.client);
  const snippet = snippets.find((s) => s.client === shown) ?? snippets[0]!;
  return (
    <section class="panel" aria-labelledby="connect-title">
      <h2 id="connect-title">Connect an agent</h2>
      <p>
        MCP endpoint: <code data-testid="mcp-url">{mcpUrl}</code> <CopyButton text={mcpUrl} label="MCP URL" />
      </p>
      <p class="muted">
        Agents authenticate with a key that has the <code>tools:call</code> scope (create one under <a href={href(ws, "keys")}>Keys</a>
        ); replace <code>rr_…</code> with it.
      </p>
      <div role="tablist" aria-label="Client" class="actions">
        {snippets.map((s) => (
          <button
            key={s.client}
            type="button"
            role="tab"
            aria-selected={s.client === shown}
            aria-controls="connect-snippet"
            class={s.client === shown ? undefined : "secondary"}
            onClick={() => setShown(s.client)}
          >
            {s.client}
          </button>
        ))}
      </div>
      <div id="connect-snippet" role="tabpanel" class="snippet" aria-label={`${snippet.client} snippet`}>
        <p class="muted">{snippet.where}</p>
        <pre tabIndex={0}>{snippet.text}</pre>
        <CopyButton text={snippet.text} label={`${snippet.client} snippet`} />
      </div>
    </section>
  );
}

/** The newest calls recorded workspace-wide, of every kind (`GET …/logs`); Logs has them all, with filters. */
function LastCalls({ ws }: { ws: string }) {
  const calls = useLoad(async () => {
    const page = await call(api.GET("/v1/workspaces/{ws}/logs", { params: { path: { ws }, query: { limit: LAST_CALLS } } }));
    // The route answers JSON lines (a string) only when asked with format=jsonl, which the console never does.
    if (typeof page === "string") throw new Error("The logs route answered JSON lines instead of JSON");
    return page.calls;
  }, [ws]);
  const name = useActorNames(ws);
  return (
    <section aria-labelledby="last-calls-title">
      <h2 id="last-calls-title">Last calls</h2>
      <ErrorNote error={calls.error} />
      {calls.data?.length === 0 && <Empty>No calls yet: connect an agent above.</Empty>}
      {calls.data && calls.data.length > 0 && (
        <div class="table-wrap">
          <table class="stack">
            <caption class="muted">
              The {LAST_CALLS} newest, newest first; every call is under <a href={href(ws, "logs")}>Logs</a>.
            </caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Name</th>
                <th scope="col">By</th>
                <th scope="col">Outcome</th>
                <th scope="col">Duration</th>
              </tr>
            </thead>
            <tbody>
              {calls.data.map((row) => (
                <tr key={row.id}>
                  <td data-label="When">{when(row.createdAt)}</td>
                  <td data-label="Name">
                    <code>{row.name}</code>
                  </td>
                  <td data-label="By">{name(row.actor)}</td>
                  <td data-label="Outcome" class={OK_OUTCOMES.has(row.outcome) ? "ok" : "error"}>
                    {row.outcome}
                    {row.code && ` (${row.code})`}
                  </td>
                  <td data-label="Duration">{Math.round(row.durationMs)} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Allowance({ label, used, limit, format }: { label: string; used: number; limit: number; format: (n: number) => string }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td data-label="Used">{format(used)}</td>
      <td data-label="Limit">{format(limit)}</td>
      <td data-label="Share">
        <meter
          class="meter"
          min={0}
          max={limit}
          value={used}
          high={limit * 0.8}
          aria-label={`${label}: ${format(used)} of ${format(limit)}`}
        />
      </td>
    </tr>
  );
}
