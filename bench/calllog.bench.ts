// `npm run bench -- calllog` (and part of the full run): what logging every call costs, under `wrangler dev` with the
// real local queue. Two gateways side by side, the same no-hook tools/call on each, one with the call log on and one
// with it off (CALL_LOG=off), interleaved call by call: the p50 difference is what logging adds to a call (target
// ≤ +0.2 ms). Then 16 clients for a while on the logging gateway: every call must become exactly one call row (0 lost).
import { join } from "node:path";
import { BOOTSTRAP, startGatewayWorker, type RunningWorker } from "../test/node/gateway.ts";
import { fmt, measureInterleaved, start, stop, summarise, waitFor, type Figures } from "./lib.ts";

const root = join(import.meta.dirname, "..");
const ROUNDS = Number(process.env.BENCH_CALLLOG_ROUNDS ?? 1000);
const LOAD_SECONDS = Number(process.env.BENCH_CALLLOG_SECONDS ?? 20);
const CLIENTS = 16;
/** After each call, so its after-response work (the queue send, the consumer's batch) is not timed with the next. */
const PAUSE_MS = 25;

export interface CallLogBench {
  logging: Figures;
  off: Figures;
  load: { seconds: number; clients: number; calls: number; errors: number; rows: number; lost: number; drainMs: number };
}

const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const body = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "demo__search_release_notes", arguments: { query: "search" } },
});

async function json(origin: string, method: string, path: string, key: string, payload?: unknown) {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: payload === undefined ? undefined : JSON.stringify(payload),
  });
  const parsed = (await res.json()) as any;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

async function seed(gateway: RunningWorker, upstreamUrl: string) {
  const created = await json(gateway.origin, "POST", "/v1/workspaces", BOOTSTRAP, { name: "call log bench" });
  const ws = created.workspace.id as string;
  const admin = created.adminKey.secret as string;
  await json(gateway.origin, "POST", `/v1/workspaces/${ws}/services`, admin, { slug: "demo", url: upstreamUrl });
  const key = await json(gateway.origin, "POST", `/v1/workspaces/${ws}/keys`, admin, {
    name: "bench agent",
    scopes: ["tools:call"],
    profileId: created.defaultProfileId,
  });
  const call = async () => {
    const res = await fetch(`${gateway.origin}/mcp`, {
      method: "POST",
      headers: { ...mcpHeaders, authorization: `Bearer ${key.secret}` },
      body,
    });
    const text = await res.text();
    if (!res.ok || !text.includes("structuredContent")) throw new Error(`bad response ${res.status}: ${text.slice(0, 200)}`);
  };
  const rows = async () => {
    const metrics = await json(
      gateway.origin,
      "GET",
      `/v1/workspaces/${ws}/metrics?since=${new Date(Date.now() - 3_600_000).toISOString()}`,
      admin,
    );
    return metrics.totals as { calls: number; lost: number };
  };
  return { call, rows };
}

export async function benchCallLog(): Promise<CallLogBench> {
  const upstream = start(process.execPath, [join(root, "demo/upstream/main.ts"), "18820"], root);
  const upstreamUrl = "http://127.0.0.1:18820/mcp";
  let logging: RunningWorker | undefined;
  let off: RunningWorker | undefined;
  try {
    await waitFor("http://127.0.0.1:18820/__calls");
    logging = await startGatewayWorker({ port: 18821, inspectorPort: 18822 });
    off = await startGatewayWorker({ port: 18823, inspectorPort: 18824, vars: { CALL_LOG: "off" } });
    const on = await seed(logging, upstreamUrl);
    const without = await seed(off, upstreamUrl);
    await measureInterleaved({ logging: on.call, off: without.call }, 100, PAUSE_MS);
    const samples = await measureInterleaved({ logging: on.call, off: without.call }, ROUNDS, PAUSE_MS);

    // 16 clients on the logging gateway, once the rows of the rounds above have all landed; then wait for the drain.
    let before = -1;
    for (let settled = (await on.rows()).calls; settled !== before;) {
      before = settled;
      await new Promise((resolve) => setTimeout(resolve, 2000));
      settled = (await on.rows()).calls;
    }
    let calls = 0;
    let errors = 0;
    const deadline = Date.now() + LOAD_SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (Date.now() < deadline) {
          calls++;
          await on.call().catch(() => errors++);
        }
      }),
    );
    const ended = Date.now();
    let totals = await on.rows();
    while (totals.calls - before < calls && Date.now() - ended < 60_000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      totals = await on.rows();
    }
    const load = {
      seconds: LOAD_SECONDS,
      clients: CLIENTS,
      calls,
      errors,
      rows: totals.calls - before,
      lost: totals.lost,
      drainMs: Date.now() - ended,
    };
    return { logging: summarise(samples.logging), off: summarise(samples.off), load };
  } finally {
    await logging?.stop();
    await off?.stop();
    stop(upstream);
  }
}

export function printCallLog(result: CallLogBench): void {
  const { logging, off, load } = result;
  console.log(`\nCall log: a no-hook tools/call with the call log on and off, ${ROUNDS} interleaved rounds (ms)   p50      p99`);
  console.log(`  logging off (CALL_LOG=off)                                                       ${fmt(off.p50)}  ${fmt(off.p99)}`);
  console.log(
    `  logging on (one queue message per call, after the response)                      ${fmt(logging.p50)}  ${fmt(logging.p99)}`,
  );
  const added = logging.p50 - off.p50;
  console.log(`  logging adds ${added < 0 ? "−" : "+"}${Math.abs(added).toFixed(2)} ms p50 (target ≤ +0.2 ms)`);
  console.log(
    `  ${load.clients} clients for ${load.seconds} s: ${load.calls} calls, ${load.errors} errors, ${load.rows} call rows, ${load.lost} lost to the queue, drained ${load.drainMs} ms after the load (${load.rows === load.calls && load.lost === 0 ? "0 rows lost" : "MISMATCH"})`,
  );
}
