// `npm run bench -- proxy` (and part of the full run): the MCP proxy's streaming costs (issue 13).
// - Time to the first progress notification of a streamed tools/call, through the gateway ÷ direct to the upstream
//   (the bare forwarding Worker beside them shows what one `wrangler dev` hop costs).
// - A 1 MiB tool result streamed back, through the gateway ÷ through the bare forwarding Worker (target ≤ 1.2×).
// Both upstream targets are the demo upstream's interactive fixture (sessions, SSE answers, progress); each target
// keeps one session, as the gateway keeps its upstream session. Targets are interleaved call by call in the
// balanced orders of `balancedOrders`, so load drift falls on all of them alike.
import { request, seedWorkspace, startGateway } from "../test/node/gateway.ts";
import { balancedOrders, fmt, ratio, startForwarder, summarise, type Figures, type RunningForwarder } from "./lib.ts";

const PROGRESS_ROUNDS = Number(process.env.BENCH_PROXY_PROGRESS_ROUNDS ?? 300);
const LARGE_ROUNDS = Number(process.env.BENCH_PROXY_LARGE_ROUNDS ?? 60);
const LARGE_RESULT_BYTES = 1024 * 1024;
const LARGE_RESULT_TARGET = 1.2;

export interface ProxyBench {
  firstProgress: Record<"direct" | "forwarder" | "gateway", Figures>;
  largeResult: Record<"direct" | "forwarder" | "gateway", Figures>;
}

interface Target {
  url: string;
  headers: Record<string, string>;
}

const ACCEPT = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** Opens an MCP session on a stateful upstream (directly or through the forwarder); the gateway needs none. */
async function openSession(url: string): Promise<Target> {
  const init = await fetch(url, {
    method: "POST",
    headers: ACCEPT,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
    }),
  });
  await init.text();
  const sessionId = init.headers.get("mcp-session-id");
  if (!init.ok || !sessionId) throw new Error(`initialize at ${url}: ${init.status}`);
  const headers = { ...ACCEPT, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" };
  await (
    await fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) })
  ).text();
  return { url, headers };
}

let nextId = 1;
const toolCall = (name: string, args: Record<string, unknown>) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: nextId++,
    method: "tools/call",
    params: { name, arguments: args, _meta: { progressToken: "bench" } },
  });

/**
 * Milliseconds from sending the call until `until` holds for the bytes read so far; the rest of the answer is read
 * untimed, so the next call starts on a quiet connection.
 */
async function timeUntil(target: Target, body: string, until: (text: string) => boolean): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(target.url, { method: "POST", headers: target.headers, body });
  if (!res.ok || !res.body) throw new Error(`${target.url}: ${res.status} ${await res.text()}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let elapsed: number | null = null;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (elapsed === null && until(text)) elapsed = performance.now() - t0;
  }
  if (elapsed === null) throw new Error(`${target.url}: the answer never showed what was timed: ${text.slice(0, 300)}`);
  return elapsed;
}

async function interleave<K extends string>(calls: Record<K, () => Promise<number>>, rounds: number): Promise<Record<K, Figures>> {
  const names = Object.keys(calls) as K[];
  const orders = balancedOrders(names.length);
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < Math.ceil(rounds / orders.length) * orders.length; round++) {
    for (const index of orders[round % orders.length]!) samples[names[index]!].push(await calls[names[index]!]());
  }
  return Object.fromEntries(names.map((name) => [name, summarise(samples[name])])) as Record<K, Figures>;
}

export async function benchProxy(): Promise<ProxyBench> {
  const gateway = await startGateway({ fixtures: true });
  let forwarder: RunningForwarder | undefined;
  try {
    forwarder = await startForwarder(gateway.upstream.origin);
    const forwarderOrigin = forwarder.origin;
    const workspace = await seedWorkspace(gateway, "proxy bench");
    await request(gateway.origin, "POST", `/v1/workspaces/${workspace.ws}/services`, workspace.adminKey, {
      slug: "live",
      url: `${gateway.upstream.origin}/fixtures/interactive/bench-gateway/mcp`,
    });
    const key = (
      await request(gateway.origin, "POST", `/v1/workspaces/${workspace.ws}/keys`, workspace.adminKey, {
        name: "bench agent",
        scopes: ["tools:call"],
        profileId: workspace.defaultProfileId,
      })
    ).secret as string;
    const throughGateway: Target = { url: `${gateway.origin}/mcp`, headers: { ...ACCEPT, authorization: `Bearer ${key}` } };
    const direct = await openSession(`${gateway.upstream.origin}/fixtures/interactive/bench-direct/mcp`);
    const forwarded = await openSession(`${forwarderOrigin}/fixtures/interactive/bench-forwarder/mcp`);

    // The first step's progress comes after a 1 ms pause upstream, the same on every path.
    const countArgs = { seconds: 0.002, every: 0.001 };
    const sawProgress = (text: string) => text.includes('"notifications/progress"');
    const firstProgress = await interleave(
      {
        direct: () => timeUntil(direct, toolCall("slow_count", countArgs), sawProgress),
        forwarder: () => timeUntil(forwarded, toolCall("slow_count", countArgs), sawProgress),
        gateway: () => timeUntil(throughGateway, toolCall("live__slow_count", countArgs), sawProgress),
      },
      PROGRESS_ROUNDS,
    );

    const sawResult = (text: string) => text.includes('"result"') && text.length > LARGE_RESULT_BYTES;
    const bigArgs = { bytes: LARGE_RESULT_BYTES };
    const largeResult = await interleave(
      {
        direct: () => timeUntil(direct, toolCall("big_result", bigArgs), sawResult),
        forwarder: () => timeUntil(forwarded, toolCall("big_result", bigArgs), sawResult),
        gateway: () => timeUntil(throughGateway, toolCall("live__big_result", bigArgs), sawResult),
      },
      LARGE_ROUNDS,
    );
    return { firstProgress, largeResult };
  } finally {
    forwarder?.stop();
    await gateway.stop();
  }
}

export function printProxy(bench: ProxyBench): void {
  const { firstProgress: progress, largeResult: large } = bench;
  console.log("\nMCP proxy streaming (milliseconds)");
  console.log(`  first progress notification      p50      p99`);
  console.log(`    direct to the upstream     ${fmt(progress.direct.p50)}  ${fmt(progress.direct.p99)}`);
  console.log(`    bare forwarding Worker     ${fmt(progress.forwarder.p50)}  ${fmt(progress.forwarder.p99)}`);
  console.log(
    `    through the gateway        ${fmt(progress.gateway.p50)}  ${fmt(progress.gateway.p99)}  ${ratio(progress.gateway.p50, progress.direct.p50)} direct (p50)`,
  );
  console.log(`  1 MiB result, streamed             p50      p99`);
  console.log(`    direct to the upstream     ${fmt(large.direct.p50)}  ${fmt(large.direct.p99)}`);
  console.log(`    bare forwarding Worker     ${fmt(large.forwarder.p50)}  ${fmt(large.forwarder.p99)}`);
  const gap = large.gateway.p50 / large.forwarder.p50;
  console.log(
    `    through the gateway        ${fmt(large.gateway.p50)}  ${fmt(large.gateway.p99)}  ${ratio(large.gateway.p50, large.forwarder.p50)} forwarder (p50; target ≤ ${LARGE_RESULT_TARGET}×${gap <= LARGE_RESULT_TARGET ? "" : ": misses it"})`,
  );
}
