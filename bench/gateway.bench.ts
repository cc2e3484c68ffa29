// `npm run bench` part 1: tools/call latency against (a) the demo upstream
// directly, (b) a bare forwarding Worker and (c) the gateway, both under
// Miniflare's API (bench/miniflare-host.ts: the workerd `wrangler dev` runs, without
// wrangler's proxy in front), 1,000 sequential calls then 16 concurrent clients.
import { join } from "node:path";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { isolateFootprint, processGroupMemory, workerdIsolates, type IsolateFootprint, type TreeMemory } from "./memory.ts";
import {
  balancedOrders,
  fmt,
  measure,
  measureInterleaved,
  ratio,
  start,
  startUnderMiniflare,
  stop,
  summarise,
  waitFor,
  type Figures,
  type HostedWorker,
} from "./lib.ts";

const root = join(import.meta.dirname, "..");
const ports = { upstream: 18790, forwarder: 18791, gateway: 18792, forwarderInspector: 18793, gatewayInspector: 18794 };
const SEQUENTIAL = Number(process.env.BENCH_CALLS ?? 1000);
const SEQUENTIAL_RUNS = Number(process.env.BENCH_RUNS ?? 3);
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
/** The same call at 2026-07-28: the per-request envelope in `_meta`, and the headers that mirror the body. */
const modernCallBody = (name: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: {
      name,
      arguments: { query: "search" },
      _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} },
    },
  });
const modernHeaders = (name: string) => ({
  ...mcpHeaders,
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "tools/call",
  "mcp-name": name,
});
const ELICITATION_ROUNDS = Number(process.env.BENCH_ELICITATION_ROUNDS ?? 100);

type Baseline = Record<"direct" | "forwarder" | "gateway", Figures>;

export interface GatewayBench {
  /** Each sequential run of SEQUENTIAL interleaved rounds. */
  sequentialRuns: Baseline[];
  /** The run whose p50 gap over the forwarder is the median one. */
  sequential: Baseline;
  concurrent: Record<"direct" | "forwarder" | "gateway", Figures>;
  /** Through the gateway: no hook, an active before+after, and active plus a shadow revision. */
  hooks: Record<"direct" | "forwarder" | "forwarderWithDo" | "noHook" | "active" | "activeShadow", Figures>;
  sustained: { seconds: number; clients: number; calls: number; errors: number; expectedLogs: number; loggedRows: number };
  /** The same tools/call at 2026-07-28 and at 2025-era, through the gateway, against the bare forwarder. */
  modern: Record<"forwarder" | "gateway2025" | "gateway2026", Figures>;
  /** One elicitation round trip (call, the upstream's elicitation, the answer, the result): a 2026-07-28 client through the gateway, a 2025-era client direct. */
  elicitation: Record<"direct" | "gateway", Figures>;
  /** Lease grants (the call path's only Durable Object requests) per 1,000 calls: the hook rounds, and the sustained load. */
  leaseGrantsPerThousand: { rounds: number; sustained: number };
  /** From a deploy request to its answer, under the sustained load (one isolate: it gives its own lease up). */
  deployAnswer: Figures;
  /**
   * The gateway isolate's heap and footprint, miniflare's other isolates, and both process trees: idle, after
   * 10,000 hooked calls, after the sustained load, and after the same load on the bare forwarder alone.
   */
  memory: MemorySample[];
}

export interface MemorySample {
  label: string;
  /** Calls each Worker had served by then. */
  calls: { gateway: number; forwarder: number };
  /** Unread when the inspector could not be reached or answered nothing: why. */
  isolate: IsolateFootprint | { unread: string };
  /** Used heap of miniflare's own isolates beside the gateway's (D1, R2, queues, cache, entry), uncollected. */
  helpersBytes: number;
  gateway: TreeMemory;
  forwarder: TreeMemory;
}

/** The hook measured: rewrites the query, trims the result, logs once (the shape of a real adapter). */
const BENCH_HOOK = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args, context }) {
    context.log.info("search", { query: args.query });
    return { action: "continue", arguments: { query: String(args.query).trim().toLowerCase() } };
  },
  after({ result }) {
    return { action: "return", result: { items: result.items.slice(0, 3) } };
  },
});
`;
const SUSTAINED_SECONDS = Number(process.env.BENCH_SUSTAINED_SECONDS ?? 30);
const HOOKED_CALLS_FOR_MEMORY = Number(process.env.BENCH_MEMORY_CALLS ?? 10_000);
const DEPLOYS = 5;
// Deferred work starts 20 ms after a response (AFTER_RESPONSE_DELAY_MS) and takes
// a few ms; in phase 2 each call is followed by this untimed pause.
const PAUSE_MS = 35;

export async function benchGateway(): Promise<GatewayBench> {
  const upstream = start(process.execPath, [join(root, "demo/upstream/main.ts"), String(ports.upstream), "--fixtures"], root);
  const upstreamOrigin = `http://127.0.0.1:${ports.upstream}`;
  let forwarder: HostedWorker | undefined;
  let gateway: HostedWorker | undefined;
  try {
    await waitFor(`${upstreamOrigin}/__calls`);
    forwarder = await startUnderMiniflare({
      config: "bench/forwarder.wrangler.toml",
      port: ports.forwarder,
      inspectorPort: ports.forwarderInspector,
      vars: { UPSTREAM_ORIGIN: upstreamOrigin },
    });
    // The dev-only variables test/node/gateway.ts gives `wrangler dev`: a loopback upstream, loopback Hosts for /mcp.
    gateway = await startUnderMiniflare({
      config: "wrangler.toml",
      port: ports.gateway,
      inspectorPort: ports.gatewayInspector,
      migrate: true,
      vars: {
        DEV_ALLOWED_HOSTS: "127.0.0.1",
        MCP_ALLOWED_HOSTS: "localhost,127.0.0.1",
        BOOTSTRAP_SECRET: bootstrap,
        SECRETS_KEY: Buffer.alloc(32, 7).toString("base64"),
      },
    });
    const gatewayOrigin = gateway.origin;
    const seeded = await seedGateway(gatewayOrigin, `${upstreamOrigin}/mcp`);
    const clientKey = seeded.clientKey;
    const memory: MemorySample[] = [];
    const served = { gateway: 0, forwarder: 0 };
    const sampleMemory = async (label: string) => {
      const isolate = await isolateFootprint(
        ports.gatewayInspector,
        process.env.BENCH_HEAP_SNAPSHOTS && `${process.env.BENCH_HEAP_SNAPSHOTS}/${memory.length}.heapsnapshot`,
      ).catch((error: unknown) => ({ unread: String(error) }));
      let helpersBytes = 0;
      for (const heap of (await workerdIsolates(ports.gatewayInspector)).values()) helpersBytes += heap.usedBytes;
      const sample = {
        label,
        calls: { ...served },
        isolate,
        helpersBytes,
        gateway: processGroupMemory(gateway!.pid!),
        forwarder: processGroupMemory(forwarder!.pid!),
      };
      if (!memory.length) printMemoryHeader();
      memory.push(sample);
      printMemorySample(sample);
    };
    await sampleMemory("idle, seeded");
    const leaseGrants = async () =>
      (
        (await (
          await fetch(`${gatewayOrigin}/v1/workspaces/${seeded.workspace}/lease`, {
            headers: { authorization: `Bearer ${seeded.adminKey}` },
          })
        ).json()) as { grants: number }
      ).grants;

    const gatewayTarget = (slug: string) => ({
      url: `${gatewayOrigin}/mcp`,
      body: callBody.replace("search_release_notes", `${slug}__search_release_notes`),
      headers: { ...mcpHeaders, authorization: `Bearer ${clientKey}` },
    });
    const targets = {
      direct: { url: `${upstreamOrigin}/mcp`, body: callBody, headers: mcpHeaders },
      forwarder: { url: `http://127.0.0.1:${ports.forwarder}/mcp`, body: callBody, headers: mcpHeaders },
      forwarderWithDo: { url: `http://127.0.0.1:${ports.forwarder}/with-do/mcp`, body: callBody, headers: mcpHeaders },
      gateway: gatewayTarget("demo"),
      active: gatewayTarget("hooked"),
      activeShadow: gatewayTarget("shadowed"),
    };
    const once = (target: { url: string; body: string; headers: Record<string, string> }, tree?: keyof typeof served) => async () => {
      if (tree) served[tree]++;
      const res = await fetch(target.url, { method: "POST", headers: target.headers, body: target.body });
      const text = await res.text();
      if (!res.ok || !text.includes("structuredContent")) throw new Error(`bad response ${res.status}: ${text.slice(0, 200)}`);
    };

    const callers = {
      direct: once(targets.direct),
      forwarder: once(targets.forwarder, "forwarder"),
      forwarderWithDo: once(targets.forwarderWithDo, "forwarder"),
      gateway: once(targets.gateway, "gateway"),
      active: once(targets.active, "gateway"),
      activeShadow: once(targets.activeShadow, "gateway"),
    };

    // Phase 1, no hook deployed anywhere: the gateway against its baselines.
    const baseline = { direct: callers.direct, forwarder: callers.forwarder, gateway: callers.gateway };
    await measureInterleaved(baseline, 100); // warm-up
    // The gap moves by a few tenths of a ms from one run of 1,000 to the next, so
    // the sequential phase is repeated and judged by the median of the runs' gaps.
    const runs: Baseline[] = [];
    for (let run = 0; run < SEQUENTIAL_RUNS; run++) {
      const samples = await measureInterleaved(baseline, SEQUENTIAL);
      runs.push({ direct: summarise(samples.direct), forwarder: summarise(samples.forwarder), gateway: summarise(samples.gateway) });
    }
    const result = { sequentialRuns: runs, sequential: medianRun(runs), concurrent: {} } as GatewayBench;
    printSequentialRuns(runs);
    // Concurrent load, in blocks that take turns in balanced orders, so drift in the machine's
    // load over the minutes this takes falls on every target alike.
    const concurrentSamples = { direct: [] as number[], forwarder: [] as number[], gateway: [] as number[] };
    const names = ["direct", "forwarder", "gateway"] as const;
    const orders = balancedOrders(names.length);
    for (const order of orders) {
      for (const index of order) {
        const name = names[index]!;
        concurrentSamples[name].push(...(await measure(callers[name], Math.ceil(CONCURRENT_CALLS / orders.length), CONCURRENT_CLIENTS)));
      }
    }
    for (const name of names) result.concurrent[name] = summarise(concurrentSamples[name]);
    printLatency(result);

    // Phase 1b: the same call at 2026-07-28 (stateless, v2 SDK entry) against the bare forwarder and the 2025-era call.
    const modernName = "demo__search_release_notes";
    const modernCall = once(
      {
        url: `${gatewayOrigin}/mcp`,
        body: modernCallBody(modernName),
        headers: { ...modernHeaders(modernName), authorization: `Bearer ${clientKey}` },
      },
      "gateway",
    );
    const modernCalls = { forwarder: callers.forwarder, gateway2025: callers.gateway, gateway2026: modernCall };
    await measureInterleaved(modernCalls, 100);
    const modernRounds = await measureInterleaved(modernCalls, SEQUENTIAL);
    result.modern = {
      forwarder: summarise(modernRounds.forwarder),
      gateway2025: summarise(modernRounds.gateway2025),
      gateway2026: summarise(modernRounds.gateway2026),
    };
    printModern(result.modern);
    result.elicitation = await benchElicitation(upstreamOrigin, gatewayOrigin, clientKey);
    printElicitation(result.elicitation);

    // Phase 2: the same upstream tool behind three services: no hook, an active hook, active + shadow.
    // Each call is followed by a pause, so its shadow run and log writes finish before the next is timed.
    const hooked = new HookDeployer(gatewayOrigin, seeded.adminKey, seeded.workspace, seeded.toolUids.hooked!);
    await hooked.deploy("active", await hooked.revision(BENCH_HOOK));
    const shadowed = new HookDeployer(gatewayOrigin, seeded.adminKey, seeded.workspace, seeded.toolUids.shadowed!);
    await shadowed.deploy("active", await shadowed.revision(BENCH_HOOK));
    await shadowed.deploy("shadow", await shadowed.revision(`// shadow\n${BENCH_HOOK}`));
    // The forwarder, bare and with one Durable Object read, gives the floor a hooked call cannot go
    // below: the pipeline re-reads the active revision from the workspace's Durable Object before
    // dispatch (DESIGN, call pipeline step 4).
    const hookCalls = {
      direct: callers.direct,
      forwarder: callers.forwarder,
      forwarderWithDo: callers.forwarderWithDo,
      noHook: callers.gateway,
      active: callers.active,
      activeShadow: callers.activeShadow,
    };
    await measureInterleaved(hookCalls, 50, PAUSE_MS);
    const grantsBeforeRounds = await leaseGrants();
    const hookRounds = await measureInterleaved(hookCalls, SEQUENTIAL, PAUSE_MS);
    // Three of the six targets go through the gateway; nothing changes the workspace meanwhile, so one version counts all.
    const roundGrants = (await leaseGrants()) - grantsBeforeRounds;
    result.hooks = {
      direct: summarise(hookRounds.direct),
      forwarder: summarise(hookRounds.forwarder),
      forwarderWithDo: summarise(hookRounds.forwarderWithDo),
      noHook: summarise(hookRounds.noHook),
      active: summarise(hookRounds.active),
      activeShadow: summarise(hookRounds.activeShadow),
    };
    const roundGrantsPerThousand = (roundGrants / (3 * SEQUENTIAL)) * 1000;
    printHookRounds(result.hooks, roundGrantsPerThousand);
    const gatewayCall = callers.activeShadow;
    const hooks = shadowed;

    // 10,000 hooked calls from 16 clients, then the isolate's memory.
    let hookedCalls = 0;
    await Promise.all(
      Array.from({ length: CONCURRENT_CLIENTS }, async () => {
        while (hookedCalls < HOOKED_CALLS_FOR_MEMORY) {
          hookedCalls++;
          await callers.active().catch(() => {});
        }
      }),
    );
    await sampleMemory(`after ${HOOKED_CALLS_FOR_MEMORY} hooked calls`);
    const redeploy = [await hooked.revision(`// variant\n${BENCH_HOOK}`), await hooked.revision(BENCH_HOOK)];

    // Sustained load with active + shadow: every call must succeed and write exactly four log rows.
    // Meanwhile another tool's hook is deployed a few times: how long its answer takes under load.
    const logsBefore = await hooks.countLogs();
    let calls = 0;
    let errors = 0;
    const deadline = Date.now() + SUSTAINED_SECONDS * 1000;
    const deployTimes: number[] = [];
    const deploying = (async () => {
      for (let n = 0; n < DEPLOYS; n++) {
        await new Promise((resolve) => setTimeout(resolve, (SUSTAINED_SECONDS * 500) / DEPLOYS));
        const started = performance.now();
        await hooked.deploy("active", redeploy[n % 2]!);
        deployTimes.push(performance.now() - started);
      }
    })();
    const load = Promise.all(
      Array.from({ length: CONCURRENT_CLIENTS }, async () => {
        while (Date.now() < deadline) {
          calls++;
          await gatewayCall().catch(() => errors++);
        }
      }),
    );
    await deploying;
    // Each deploy moves the lease version, which counts its own grants: count from the last one to the end.
    const grantsAfterDeploys = await leaseGrants();
    const callsAfterDeploys = calls;
    await load;
    const sustainedGrants = (await leaseGrants()) - grantsAfterDeploys;
    const sustainedCalls = calls - callsAfterDeploys;
    await sampleMemory(`after ${CONCURRENT_CLIENTS} clients × ${SUSTAINED_SECONDS} s`);
    const expectedLogs = calls * 4;
    let loggedRows = 0;
    for (let attempt = 0; attempt < 40; attempt++) {
      loggedRows = (await hooks.countLogs()) - logsBefore;
      if (loggedRows >= expectedLogs) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    result.sustained = { seconds: SUSTAINED_SECONDS, clients: CONCURRENT_CLIENTS, calls, errors, expectedLogs, loggedRows };
    result.leaseGrantsPerThousand = {
      rounds: roundGrantsPerThousand,
      sustained: sustainedCalls > 0 ? (sustainedGrants / sustainedCalls) * 1000 : NaN,
    };
    result.deployAnswer = summarise(deployTimes);
    printSustained(result);

    // The same load on the bare forwarder alone: what workerd grows by for any Worker.
    const forwarderDeadline = Date.now() + SUSTAINED_SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CONCURRENT_CLIENTS }, async () => {
        while (Date.now() < forwarderDeadline) await callers.forwarder().catch(() => {});
      }),
    );
    await sampleMemory(`forwarder: ${CONCURRENT_CLIENTS} clients × ${SUSTAINED_SECONDS} s`);
    printMemorySummary(memory);
    result.memory = memory;
    return result;
  } finally {
    gateway?.stop();
    forwarder?.stop();
    stop(upstream);
  }
}

/**
 * One elicitation round trip, timed from the call to its result: a 2025-era client straight to the interactive
 * fixture (the elicitation rides the call's SSE stream), and a 2026-07-28 client through the gateway (an
 * input-required answer, the client's handler, the retry that reaches the waiting upstream request).
 */
async function benchElicitation(
  upstreamOrigin: string,
  gatewayOrigin: string,
  clientKey: string,
): Promise<Record<"direct" | "gateway", Figures>> {
  const answer = { action: "accept" as const, content: { name: "Ada" } };
  const direct = new LegacyClient({ name: "bench-direct", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  direct.setRequestHandler(ElicitRequestSchema, async () => answer);
  await direct.connect(new LegacyTransport(new URL(`${upstreamOrigin}/fixtures/interactive/bench-direct/mcp`)));
  const modern = new ModernClient(
    { name: "bench-modern", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  modern.setRequestHandler("elicitation/create", async () => answer);
  await modern.connect(
    new ModernTransport(new URL(`${gatewayOrigin}/mcp`), { requestInit: { headers: { authorization: `Bearer ${clientKey}` } } }),
  );
  const expectAnswer = (result: unknown) => {
    if (!JSON.stringify(result).includes("Ada")) throw new Error(`bad elicitation result: ${JSON.stringify(result)}`);
  };
  const rounds = {
    direct: async () => expectAnswer(await direct.callTool({ name: "ask_user", arguments: { question: "Name?" } })),
    gateway: async () => expectAnswer(await modern.callTool({ name: "live__ask_user", arguments: { question: "Name?" } })),
  };
  try {
    await measureInterleaved(rounds, 10);
    const samples = await measureInterleaved(rounds, ELICITATION_ROUNDS);
    return { direct: summarise(samples.direct), gateway: summarise(samples.gateway) };
  } finally {
    await direct.close();
    await modern.close();
  }
}

interface Seeded {
  workspace: string;
  adminKey: string;
  clientKey: string;
  /** search_release_notes' toolUid behind each service slug. */
  toolUids: Record<string, string>;
}

async function seedGateway(origin: string, upstreamUrl: string): Promise<Seeded> {
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
  const toolUids: Record<string, string> = {};
  // The interactive fixture (elicitation), for the elicitation round trip.
  await post(`/v1/workspaces/${ws.workspace.id}/services`, admin, {
    slug: "live",
    url: upstreamUrl.replace(/\/mcp$/, "/fixtures/interactive/bench/mcp"),
  });
  for (const slug of ["demo", "hooked", "shadowed"]) {
    const created = await post(`/v1/workspaces/${ws.workspace.id}/services`, admin, { slug, url: upstreamUrl });
    const tools = (await (
      await fetch(`${origin}/v1/workspaces/${ws.workspace.id}/tools?serviceId=${created.service.id}`, {
        headers: { authorization: `Bearer ${admin}` },
      })
    ).json()) as { tools: { uid: string; name: string }[] };
    toolUids[slug] = tools.tools.find((tool) => tool.name === "search_release_notes")!.uid;
  }
  const key = await post(`/v1/workspaces/${ws.workspace.id}/keys`, admin, {
    name: "bench",
    scopes: ["tools:call"],
    profileId: ws.defaultProfileId,
  });
  return { workspace: ws.workspace.id, adminKey: admin, clientKey: key.secret as string, toolUids };
}

/** Takes a hook from source to a deployed revision through the public API, as CI would. */
class HookDeployer {
  readonly #base: string;
  readonly #admin: string;

  constructor(origin: string, adminKey: string, workspace: string, toolUid: string) {
    this.#base = `${origin}/v1/workspaces/${workspace}/tools/${toolUid}/hook`;
    this.#admin = adminKey;
  }

  async #call(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) {
    const res = await fetch(`${this.#base}${path}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: { authorization: `Bearer ${this.#admin}`, "content-type": "application/json", ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const json = (await res.json()) as any;
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  async revision(source: string): Promise<string> {
    const draft = await this.#call("/draft");
    const saved = await this.#call("/draft", { method: "PUT", body: { source, config: {} }, headers: { "if-match": draft.etag } });
    await this.#call("/test", { body: { stage: "before", arguments: { query: "SSO " } } });
    await this.#call("/test", { body: { stage: "after", arguments: { query: "sso" }, result: { items: [] } } });
    return (await this.#call("/revisions", { body: { versionId: saved.versionId } })).revisionId as string;
  }

  async deploy(slot: "active" | "shadow", revisionId: string): Promise<void> {
    await this.#call(`/deployments/${slot}`, { method: "PUT", body: { revisionId } });
  }

  async countLogs(): Promise<number> {
    let count = 0;
    let cursor: string | null = null;
    do {
      const page: { logs: unknown[]; nextCursor: string | null } = await this.#call(`/logs?limit=1000${cursor ? `&cursor=${cursor}` : ""}`);
      count += page.logs.length;
      cursor = page.nextCursor;
    } while (cursor);
    return count;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const gapOf = (r: Baseline) => ({ p50: r.gateway.p50 - r.forwarder.p50, p99: r.gateway.p99 - r.forwarder.p99 });

/** The run whose p50 gap is the median one; its figures stay paired, as they were measured. */
function medianRun(runs: Baseline[]): Baseline {
  const byGap = [...runs].sort((a, b) => gapOf(a).p50 - gapOf(b).p50);
  return byGap[Math.floor((byGap.length - 1) / 2)]!;
}

const signed = (ms: number) => `${ms < 0 ? "−" : "+"}${Math.abs(ms).toFixed(2)}`;
const showGap = (gap: { p50: number; p99: number }) => `${signed(gap.p50)} ms p50, ${signed(gap.p99)} ms p99`;

function printSequentialRuns(runs: Baseline[]): void {
  console.log(
    `\ntools/call latency (ms): ${runs.length} sequential runs of ${SEQUENTIAL} rounds (targets interleaved call by call in balanced orders; the table shows the run with the median p50 gap), then ${CONCURRENT_CALLS} calls from ${CONCURRENT_CLIENTS} concurrent clients per target, in blocks taking turns`,
  );
  const gaps = runs.map(gapOf);
  gaps.forEach((gap, index) => console.log(`  sequential run ${index + 1}: gateway over forwarder ${showGap(gap)}`));
  console.log(
    `  median over the runs: gateway over forwarder ${showGap({ p50: median(gaps.map((g) => g.p50)), p99: median(gaps.map((g) => g.p99)) })} (target ≤ 0.5 p50)`,
  );
}

function printLatency(result: Pick<GatewayBench, "sequential" | "concurrent">): void {
  console.log("                         p50      p99   p50/direct p50/forwarder p99/forwarder");
  for (const phase of ["sequential", "concurrent"] as const) {
    const r = result[phase];
    for (const name of ["direct", "forwarder", "gateway"] as const) {
      const f = r[name];
      console.log(
        `${phase.padEnd(11)} ${name.padEnd(10)} ${fmt(f.p50)}  ${fmt(f.p99)}   ${ratio(f.p50, r.direct.p50)}    ${ratio(f.p50, r.forwarder.p50)}      ${ratio(f.p99, r.forwarder.p99)}`,
      );
    }
    console.log(`${phase.padEnd(11)} gateway overhead over forwarder: ${showGap(gapOf(r))}`);
  }
}

function printHookRounds(h: GatewayBench["hooks"], grantsPerThousand: number): void {
  const direct = h.direct;
  console.log(
    `\nHooked tools/call (ms), interleaved in balanced orders, ${PAUSE_MS} ms pause after each call  p50      p99   p50/direct p50/no-hook`,
  );
  const rows = [
    ["direct upstream", direct],
    ["bare forwarder", h.forwarder],
    ["forwarder + one Durable Object read", h.forwarderWithDo],
    ["gateway, no hook", h.noHook],
    ["active before+after", h.active],
    ["active + shadow", h.activeShadow],
  ] as const;
  for (const [label, f] of rows) {
    console.log(`  ${label.padEnd(52)} ${fmt(f.p50)}  ${fmt(f.p99)}   ${ratio(f.p50, direct.p50)}    ${ratio(f.p50, h.noHook.p50)}`);
  }
  const hooks = h.active.p50 - h.noHook.p50;
  console.log(
    `  both stages add ${signed(hooks)} ms p50 over no hook (target ≤ 0.8); shadow adds ${signed(h.activeShadow.p50 - h.active.p50)} ms p50 to the live call (target ≤ 0.5)`,
  );
  console.log(`  no hook over the bare forwarder: ${signed(h.noHook.p50 - h.forwarder.p50)} ms p50 (target ≤ 0.5)`);
  console.log(
    `  one Durable Object round trip, which a hooked call no longer makes (its lease is the recheck): ${signed(h.forwarderWithDo.p50 - h.forwarder.p50)} ms p50 from the bare forwarder`,
  );
  console.log(`  Durable Object requests (lease grants) per 1,000 calls in these rounds: ${grantsPerThousand.toFixed(1)}`);
}

function printSustained(result: Pick<GatewayBench, "leaseGrantsPerThousand" | "deployAnswer" | "sustained">): void {
  console.log(
    `  Durable Object requests (lease grants) per 1,000 calls under the sustained load: ${result.leaseGrantsPerThousand.sustained.toFixed(1)} (target: a few renewals, not one per call)`,
  );
  const deploy = result.deployAnswer;
  console.log(
    `  deploy request to answer under the sustained load: p50 ${fmt(deploy.p50)}, max ${fmt(deploy.p99)} ms over ${deploy.count} (one isolate, which gives its own lease up; with another isolate's lease, see "Leases" below)`,
  );
  const s = result.sustained;
  console.log(
    `  sustained: ${s.clients} clients for ${s.seconds} s with active + shadow: ${s.calls} calls, ${s.errors} errors, ${s.loggedRows}/${s.expectedLogs} log rows (${s.loggedRows === s.expectedLogs ? "none lost" : "MISMATCH"})`,
  );
}

function printModern(m: GatewayBench["modern"]): void {
  console.log(
    `\n2026-07-28 tools/call (ms), ${SEQUENTIAL} rounds interleaved with the bare forwarder and the 2025-era call        p50      p99   p50/forwarder`,
  );
  for (const [label, f] of [
    ["bare forwarder", m.forwarder],
    ["gateway, 2025-era call", m.gateway2025],
    ["gateway, 2026-07-28 call", m.gateway2026],
  ] as const) {
    console.log(`  ${label.padEnd(52)} ${fmt(f.p50)}  ${fmt(f.p99)}   ${ratio(f.p50, m.forwarder.p50)}`);
  }
  console.log(
    `  2026-07-28 over the forwarder: ${showGap({ p50: m.gateway2026.p50 - m.forwarder.p50, p99: m.gateway2026.p99 - m.forwarder.p99 })} (target ≤ 2 ms p50)`,
  );
}

function printElicitation(e: GatewayBench["elicitation"]): void {
  console.log(
    `\nElicitation round trip (ms), ${ELICITATION_ROUNDS} rounds interleaved                                   p50      p99   p50/direct`,
  );
  console.log(
    `  ${"2025-era client, direct to the upstream".padEnd(52)} ${fmt(e.direct.p50)}  ${fmt(e.direct.p99)}   ${ratio(e.direct.p50, e.direct.p50)}`,
  );
  console.log(
    `  ${"2026-07-28 client through the gateway (input-required)".padEnd(52)} ${fmt(e.gateway.p50)}  ${fmt(e.gateway.p99)}   ${ratio(e.gateway.p50, e.direct.p50)}`,
  );
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)}`.padStart(6);

function printMemoryHeader(): void {
  console.log(
    "\nMemory under Miniflare, MiB. Gateway isolate: its JavaScript heap after a full collection (target ≤ 64, flat), and the heap\n" +
      "snapshot's whole (heap + wasm memories + compiled wasm), the part a deployed isolate's 128 MB holds. Resident memory (RSS) of\n" +
      "each workerd (the Worker, miniflare's D1/R2/queue workers) and of its whole host (with the Node process holding Miniflare),\n" +
      "beside the bare forwarder's. Helpers: the heaps of miniflare's own isolates in the gateway's workerd, after a full collection.",
  );
  console.log(
    "                                        calls     heap  snapshot  wasm mem  wasm code  helpers | gateway workerd   host | forwarder workerd   host",
  );
}

function printMemorySample({ label, calls, isolate, helpersBytes, gateway, forwarder }: MemorySample): void {
  const read = "unread" in isolate ? undefined : isolate;
  const cell = (bytes: number | undefined) => (bytes === undefined ? "     -" : mib(bytes));
  console.log(
    `  ${label.padEnd(36)} ${String(calls.gateway).padStart(6)} ${cell(read?.usedBytes)}  ${cell(read?.snapshotBytes)}    ${cell(read?.arrayBufferBytes)}     ${cell(read?.wasmCodeBytes)}   ${mib(helpersBytes)} |          ${mib(gateway.workerdBytes)} ${mib(gateway.totalBytes)} |            ${mib(forwarder.workerdBytes)} ${mib(forwarder.totalBytes)}   (${calls.forwarder} forwarder calls)`,
  );
  if ("unread" in isolate) console.log(`    the gateway isolate was not read: ${isolate.unread}`);
}

function printMemorySummary(samples: MemorySample[]): void {
  const [idle, afterCalls, afterLoad, forwarderLoaded] = samples;
  if (!idle || !afterCalls || !afterLoad || !forwarderLoaded) return;
  if (!("unread" in afterLoad.isolate) && !("unread" in afterCalls.isolate)) {
    console.log(
      `  gateway heap after the load ÷ after the hooked calls: ${(afterLoad.isolate.usedBytes / afterCalls.isolate.usedBytes).toFixed(2)}× heap, ${(afterLoad.isolate.snapshotBytes / afterCalls.isolate.snapshotBytes).toFixed(2)}× snapshot (target: at most 64 MiB, and flat)`,
    );
  }
  // Each workerd's growth per 1,000 calls it served, from idle to the end of its last load.
  // Over one load alone it is noise: workerd's resident memory also falls back at times, by tens of MiB.
  const growth = (tree: "gateway" | "forwarder", to: MemorySample) => {
    const bytes = (sample: MemorySample) => sample[tree].workerdBytes;
    return ((bytes(to) - bytes(idle)) / (to.calls[tree] - idle.calls[tree])) * 1000;
  };
  const gatewayGrowth = growth("gateway", afterLoad);
  const forwarderGrowth = growth("forwarder", forwarderLoaded);
  console.log(
    `  workerd RSS growth per 1,000 calls served, idle to the end of its last load: gateway ${mib(gatewayGrowth)} MiB over ${afterLoad.calls.gateway} calls, bare forwarder ${mib(forwarderGrowth)} MiB over ${forwarderLoaded.calls.forwarder} (${(gatewayGrowth / forwarderGrowth).toFixed(2)}×)`,
  );
}
