// `npm run bench -- codemode` (and part of the full run): Code Mode against Direct Mode (issue 16), all through the
// gateway under `wrangler dev` with the demo upstream beside it.
// - A program making 10 sequential tool calls in one run_code ÷ a client making the same 10 calls through /mcp.
// - The cost of one inner call: (a run of 10 calls − a run of none) ÷ 10, against one direct call through the
//   gateway (target: at most 0.5 ms more, p50).
// - Bytes an agent reads to discover tools: describe_tools against tools/list, for the demo tools and for a
//   synthetic service of 200 tools.
// Targets are interleaved round by round in balanced orders, so load drift falls on all of them alike.
import { request, seedWorkspace, startGateway } from "../test/node/gateway.ts";
import { fmt, measureInterleaved, ratio, summarise, type Figures } from "./lib.ts";

const ROUNDS = Number(process.env.BENCH_CODEMODE_ROUNDS ?? 100);
const CALLS = 10;
/** Deferred work (a run writes one log row per inner call) starts 20 ms after a response; untimed pause after each. */
const PAUSE_MS = 35;
const INNER_OVERHEAD_TARGET_MS = 0.5;

export interface CodeModeBench {
  tenCalls: Record<"direct" | "code", Figures>;
  runs: Record<"empty" | "tenCalls", Figures>;
  directCall: Figures;
  /** p50 of one inner call, (10-call run − empty run) ÷ 10. */
  innerCallMs: number;
  discovery: Record<"demo" | "synthetic200", { toolsListBytes: number; describeBytes: number; tools: number }>;
}

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
let nextId = 1;

export async function benchCodeMode(): Promise<CodeModeBench> {
  const gateway = await startGateway({ fixtures: true });
  try {
    const seeded = await seedWorkspace(gateway, "codemode bench");
    await request(gateway.origin, "POST", `/v1/workspaces/${seeded.ws}/services`, seeded.adminKey, {
      slug: "many",
      url: `${gateway.upstream.origin}/fixtures/tools/200/mcp`,
    });
    // `both`: the same key calls tools directly and through run_code.
    await request(gateway.origin, "PATCH", `/v1/workspaces/${seeded.ws}/profiles/${seeded.defaultProfileId}`, seeded.adminKey, {
      discovery: "both",
    });
    const key = (
      await request(gateway.origin, "POST", `/v1/workspaces/${seeded.ws}/keys`, seeded.adminKey, {
        name: "bench",
        scopes: ["tools:call"],
        profileId: seeded.defaultProfileId,
      })
    ).secret as string;

    const rpc = async (method: string, params: unknown) => {
      const res = await fetch(`${gateway.origin}/mcp`, {
        method: "POST",
        headers: { ...HEADERS, authorization: `Bearer ${key}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
      });
      const body = (await res.json()) as { result?: any; error?: unknown };
      if (!res.ok || !body.result || body.result.isError) throw new Error(`${method}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      return body.result;
    };
    const call = (name: string, args: Record<string, unknown>) => rpc("tools/call", { name, arguments: args });
    const directCall = () => call("demo__search_release_notes", { query: "search" });
    const program = (calls: number) =>
      `let found = 0;\nfor (let i = 0; i < ${calls}; i++) found += (await tools.demo__search_release_notes({ query: "search" })).items.length;\nreturn found;`;
    const runCode = (calls: number) => async () => {
      const result = await call("run_code", { code: program(calls) });
      if (result.structuredContent.calls.length !== calls) throw new Error(`run_code made ${result.structuredContent.calls.length} calls`);
    };

    // Warm both paths (esbuild and QuickJS start on first use).
    await runCode(CALLS)();
    await directCall();

    const samples = await measureInterleaved(
      {
        direct: async () => {
          for (let i = 0; i < CALLS; i++) await directCall();
        },
        code: runCode(CALLS),
        empty: runCode(0),
        single: async () => {
          await directCall();
        },
      },
      ROUNDS,
      PAUSE_MS,
    );
    const tenCalls = { direct: summarise(samples.direct), code: summarise(samples.code) };
    const runs = { empty: summarise(samples.empty), tenCalls: tenCalls.code };

    const toolsList = (await rpc("tools/list", {})).tools as { name: string }[];
    const discovery = async (prefix: string) => {
      const listed = toolsList.filter((tool) => tool.name.startsWith(prefix));
      const described = (await call("describe_tools", { filter: prefix })).content[0].text as string;
      return {
        toolsListBytes: Buffer.byteLength(JSON.stringify(listed)),
        describeBytes: Buffer.byteLength(described),
        tools: listed.length,
      };
    };
    return {
      tenCalls,
      runs,
      directCall: summarise(samples.single),
      innerCallMs: (runs.tenCalls.p50 - runs.empty.p50) / CALLS,
      discovery: { demo: await discovery("demo__"), synthetic200: await discovery("many__") },
    };
  } finally {
    await gateway.stop();
  }
}

export function printCodeMode(bench: CodeModeBench): void {
  const { tenCalls, runs, directCall, innerCallMs, discovery } = bench;
  console.log(`\nCode Mode (through the gateway under wrangler dev; ${tenCalls.code.count} interleaved rounds)`);
  console.log(`  ${CALLS} sequential calls        p50 ms    p99 ms`);
  console.log(`  direct, ${CALLS} × /mcp         ${fmt(tenCalls.direct.p50)}   ${fmt(tenCalls.direct.p99)}`);
  console.log(`  one run_code            ${fmt(tenCalls.code.p50)}   ${fmt(tenCalls.code.p99)}`);
  console.log(`  run_code ÷ direct       ${ratio(tenCalls.code.p50, tenCalls.direct.p50)} (target: below 1×)`);
  console.log(`  run_code with no call   ${fmt(runs.empty.p50)}   ${fmt(runs.empty.p99)}`);
  console.log(`  one direct call         ${fmt(directCall.p50)}   ${fmt(directCall.p99)}`);
  console.log(
    `  one inner call          ${fmt(innerCallMs)}  ((10-call run − empty run) ÷ 10); over a direct call: ` +
      `${(innerCallMs - directCall.p50).toFixed(2)} ms (target ≤ ${INNER_OVERHEAD_TARGET_MS} ms p50)`,
  );
  console.log("  discovery bytes         tools/list  describe_tools  ratio");
  for (const [label, figures] of [
    [`demo (${discovery.demo.tools} tools)`, discovery.demo],
    [`synthetic (${discovery.synthetic200.tools} tools)`, discovery.synthetic200],
  ] as const) {
    console.log(
      `  ${label.padEnd(22)} ${String(figures.toolsListBytes).padStart(10)}  ${String(figures.describeBytes).padStart(14)}  ${ratio(figures.describeBytes, figures.toolsListBytes)}`,
    );
  }
}
