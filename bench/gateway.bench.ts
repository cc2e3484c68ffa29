// `npm run bench` part 1: tools/call latency against (a) the demo upstream
// directly, (b) a bare forwarding Worker and (c) the gateway, both under
// wrangler dev, 1,000 sequential calls then 16 concurrent clients.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fmt, measure, quietEnv, ratio, start, stop, summarise, waitFor, type Figures } from "./lib.ts";

const root = join(import.meta.dirname, "..");
const ports = { upstream: 18790, forwarder: 18791, gateway: 18792 };
const SEQUENTIAL = Number(process.env.BENCH_CALLS ?? 1000);
const CONCURRENT_CLIENTS = 16;
const CONCURRENT_CALLS = Number(process.env.BENCH_CONCURRENT_CALLS ?? 3200);
const bootstrap = "bench-bootstrap-secret";

const callBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "search_release_notes", arguments: { query: "search" } },
});
const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" };

export interface GatewayBench {
  sequential: Record<"direct" | "forwarder" | "gateway", Figures>;
  concurrent: Record<"direct" | "forwarder" | "gateway", Figures>;
}

export async function benchGateway(): Promise<GatewayBench> {
  const persist = mkdtempSync(join(tmpdir(), "rayrun-bench-"));
  const upstream = start(process.execPath, [join(root, "demo/upstream/main.ts"), String(ports.upstream)], root);
  const upstreamOrigin = `http://127.0.0.1:${ports.upstream}`;
  const forwarder = start("npx", ["wrangler", "dev", "--config", "bench/forwarder.wrangler.toml", "--local", "--ip", "127.0.0.1",
    "--port", String(ports.forwarder), "--var", `UPSTREAM_ORIGIN:${upstreamOrigin}`, "--show-interactive-dev-session=false",
    "--persist-to", join(persist, "fwd")], root);
  const secretsKey = Buffer.alloc(32, 7).toString("base64");
  const gateway = start("npx", ["wrangler", "dev", "--local", "--ip", "127.0.0.1", "--port", String(ports.gateway),
    "--persist-to", join(persist, "gw"), "--var", "DEV_ALLOWED_HOSTS:127.0.0.1", "--var", `BOOTSTRAP_SECRET:${bootstrap}`,
    "--var", `SECRETS_KEY:${secretsKey}`, "--show-interactive-dev-session=false"], root, quietEnv);
  try {
    const migrate = start("npx", ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", join(persist, "gw")], root);
    await new Promise((resolve) => migrate.on("exit", resolve));
    await waitFor(`${upstreamOrigin}/__calls`);
    await waitFor(`http://127.0.0.1:${ports.forwarder}/__calls`);
    await waitFor(`http://127.0.0.1:${ports.gateway}/v1/openapi.json`);
    const clientKey = await seedGateway(`http://127.0.0.1:${ports.gateway}`, `${upstreamOrigin}/mcp`);

    const targets = {
      direct: { url: `${upstreamOrigin}/mcp`, body: callBody, headers: mcpHeaders },
      forwarder: { url: `http://127.0.0.1:${ports.forwarder}/mcp`, body: callBody, headers: mcpHeaders },
      gateway: {
        url: `http://127.0.0.1:${ports.gateway}/mcp`,
        body: callBody.replace("search_release_notes", "demo__search_release_notes"),
        headers: { ...mcpHeaders, authorization: `Bearer ${clientKey}` },
      },
    };
    const once = (target: (typeof targets)["direct"]) => async () => {
      const res = await fetch(target.url, { method: "POST", headers: target.headers, body: target.body });
      const text = await res.text();
      if (!res.ok || !text.includes("structuredContent")) throw new Error(`bad response ${res.status}: ${text.slice(0, 200)}`);
    };
    const result: GatewayBench = { sequential: {} as GatewayBench["sequential"], concurrent: {} as GatewayBench["concurrent"] };
    for (const name of ["direct", "forwarder", "gateway"] as const) {
      await measure(once(targets[name]), 100, 1); // warm-up
      result.sequential[name] = summarise(await measure(once(targets[name]), SEQUENTIAL, 1));
    }
    for (const name of ["direct", "forwarder", "gateway"] as const) {
      result.concurrent[name] = summarise(await measure(once(targets[name]), CONCURRENT_CALLS, CONCURRENT_CLIENTS));
    }
    return result;
  } finally {
    for (const child of [gateway, forwarder, upstream]) stop(child);
  }
}

async function seedGateway(origin: string, upstreamUrl: string): Promise<string> {
  const post = async (path: string, auth: string, body: unknown) => {
    const res = await fetch(`${origin}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${auth}` },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (res.status >= 300) throw new Error(`${path}: ${JSON.stringify(json)}`);
    return json;
  };
  const ws = await post("/v1/workspaces", bootstrap, { name: "bench" });
  const admin = ws.adminKey.secret as string;
  await post(`/v1/workspaces/${ws.workspace.id}/services`, admin, { slug: "demo", url: upstreamUrl });
  const key = await post(`/v1/workspaces/${ws.workspace.id}/keys`, admin, { name: "bench", scopes: ["tools:call"], profileId: ws.defaultProfileId });
  return key.secret as string;
}

export function printGateway(result: GatewayBench): void {
  console.log(`\ntools/call latency (ms): ${SEQUENTIAL} sequential calls, then ${CONCURRENT_CALLS} calls from ${CONCURRENT_CLIENTS} concurrent clients`);
  console.log("                         p50      p99   p50/direct p50/forwarder p99/forwarder");
  for (const phase of ["sequential", "concurrent"] as const) {
    const r = result[phase];
    for (const name of ["direct", "forwarder", "gateway"] as const) {
      const f = r[name];
      console.log(
        `${phase.padEnd(11)} ${name.padEnd(10)} ${fmt(f.p50)}  ${fmt(f.p99)}   ${ratio(f.p50, r.direct.p50)}    ${ratio(f.p50, r.forwarder.p50)}      ${ratio(f.p99, r.forwarder.p99)}`,
      );
    }
    console.log(
      `${phase.padEnd(11)} gateway overhead over forwarder: +${(r.gateway.p50 - r.forwarder.p50).toFixed(2)} ms p50, +${(r.gateway.p99 - r.forwarder.p99).toFixed(2)} ms p99 (target ≤ 2 / ≤ 5)`,
    );
  }
}
