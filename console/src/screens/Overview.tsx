import { api, call } from "../api.ts";
import { href } from "../router.ts";
import { bytes } from "../ui/format.ts";
import { useLoad } from "../ui/load.ts";
import { ErrorNote, Loading } from "../ui/status.tsx";
import { MetricsChart } from "./MetricsChart.tsx";
import type { ScreenProps } from "./screen.ts";

export function Overview({ ws }: ScreenProps) {
  const path = { params: { path: { ws } } };
  const data = useLoad(async () => {
    const [services, tools, usage, pending] = await Promise.all([
      call(api.GET("/v1/workspaces/{ws}/services", path)),
      call(api.GET("/v1/workspaces/{ws}/tools", path)),
      call(api.GET("/v1/workspaces/{ws}/hooks/usage", path)),
      call(api.GET("/v1/workspaces/{ws}/approvals", { params: { path: { ws }, query: { status: "pending", limit: 100 } } })),
    ]);
    return { services: services.services, tools: tools.tools, usage, pending: pending.approvals.length };
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
              {data.data.tools.filter((t) => t.status === "review_required").length} awaiting review
            </li>
            <li>
              <a href={href(ws, "approvals")}>{data.data.pending} pending approvals</a>
            </li>
          </ul>
          <h2>Calls</h2>
          <MetricsChart ws={ws} label="Chart of the workspace's calls per minute by outcome and p50/p99 duration" />
          <h2>Allowances in use</h2>
          <table>
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
        </>
      )}
    </section>
  );
}

function Allowance({ label, used, limit, format }: { label: string; used: number; limit: number; format: (n: number) => string }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td>{format(used)}</td>
      <td>{format(limit)}</td>
      <td>
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
