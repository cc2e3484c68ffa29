// `npm run bench` part 2 (issues 12 and 26): while one workspace runs an attack
// whose size it controls, another workspace's tools/call keeps its latency. One
// gateway under wrangler dev (one isolate, as in production), a calm tenant
// calling the demo upstream's tool, and an attacker with a hostile upstream.
// Each figure is the calm tenant's p50 under the attack ÷ its p50 at rest,
// measured in the same run (target ≤ 1.5×). The Code Mode rows (issue 26) come
// from one attacker workspace (two for held sandboxes, as in the finding); the
// held-sandbox row times the calm tenant's own `run_code` of `return 1`.
import { startDemoUpstream } from "../demo/upstream/http.ts";
import { startGatewayWorker } from "../test/node/gateway.ts";
import { nestedBracketsSource, prettierPathologicalSource, unrelatedVersions } from "../worker/hooks/compiler/compiler.attacks.fixtures.ts";
import { bigProgram } from "../worker/codemode/codemode.attacks.fixtures.ts";
import { evilPatternSubject, uniqueItemsArguments } from "../worker/lib/schema-bounds.fixtures.ts";
import { fmt, ratio, summarise, type Figures } from "./lib.ts";

const ports = { upstream: 18800, gateway: 18801, inspector: 18802 };
const bootstrap = "bench-bootstrap-secret";
/** Calm calls timed at rest and under each attack. */
const CALM_CALLS = Number(process.env.BENCH_FAIRNESS_CALLS ?? 300);
/**
 * The attacker sends one request every ATTACK_INTERVAL_MS whether or not the last
 * has been answered (up to MAX_IN_FLIGHT): a steady script, not a flood. Before
 * the bounds one such request held the isolate for 2–30 s; a flood of even cheap
 * requests is a rate-limiting matter, not one of bounded work.
 */
const ATTACK_INTERVAL_MS = 100;
const MAX_IN_FLIGHT = 4;
/**
 * Hourly quotas (120 compiles per key, 120 draft saves per workspace) would turn
 * a long attack into cheap 429s; the attacker spreads its requests over this many
 * workspaces, so what is measured is the bounded work, not the rate limit.
 */
const ATTACKER_WORKSPACES = 8;
/** Long enough for a Code Mode row's attacker workspace to earn its whole allowance back (1.5 s at 100 ms/s). */
const ALLOWANCE_REFILL_MS = 15_000;
const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" };

interface Attack {
  /** Issue 12's item number (or 26's finding) and what the attacker sends. */
  label: string;
  /** One attack request; resolves to the error code the gateway answered with (or "ok"). */
  send(target: AttackerTarget): Promise<string>;
  /** The code(s) that show the bound did its job. */
  expected: string[];
  /** How many of the attacker workspaces the requests go to, in turn (default: all of them). */
  workspaces?: number;
  /** What the calm tenant does meanwhile (default: a direct tools/call). */
  calm?: "direct" | "run_code";
}

interface AttackerTarget {
  admin: string;
  ws: string;
  clientKey: string;
  /** toolUid of each hostile tool, by name. */
  tools: Record<string, string>;
  /** versionIds saved for the diff attack. */
  diffVersion: string;
}

export interface FairnessAttackFigures {
  label: string;
  calm: Figures;
  /** Which of the calm tenant's calls was timed, so which figure at rest it is compared with. */
  calmCall: "direct" | "run_code";
  /** The attack requests' own latency. */
  attack: Figures;
  /** Answers by code, to show that the bound (not a rate limit) answered. */
  codes: Record<string, number>;
  expected: string[];
}

export interface FairnessBench {
  rest: Figures;
  /** The calm tenant's `run_code` of `return 1` at rest. */
  restRunCode: Figures;
  attacks: FairnessAttackFigures[];
}

export async function benchFairness(): Promise<FairnessBench> {
  const upstream = await startDemoUpstream({ port: ports.upstream, host: "127.0.0.1", fixtures: true });
  const gateway = await startGatewayWorker({ port: ports.gateway, inspectorPort: ports.inspector, bootstrap, secretsKeyByte: 9 });
  try {
    const origin = gateway.origin;

    const calm = await createTenant(origin, "calm");
    await calm.addService("demo", `${upstream.origin}/mcp`);
    // `both`: the calm tenant calls its tool directly and, for the held-sandbox row, runs a program.
    await calm.request("PATCH", `/v1/workspaces/${calm.ws}/profiles/${calm.defaultProfileId}`, { discovery: "both" });
    const calmKey = await calm.clientKey();
    const calmBody = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "demo__search_release_notes", arguments: { query: "search" } },
    });
    const calmCall = async () => {
      const res = await fetch(`${origin}/mcp`, {
        method: "POST",
        headers: { ...mcpHeaders, authorization: `Bearer ${calmKey}` },
        body: calmBody,
      });
      const text = await res.text();
      if (!res.ok || !text.includes("structuredContent")) throw new Error(`calm call failed ${res.status}: ${text.slice(0, 200)}`);
    };
    const calmRunBody = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "run_code", arguments: { code: "return 1;" } },
    });
    const calmRun = async () => {
      const res = await fetch(`${origin}/mcp`, {
        method: "POST",
        headers: { ...mcpHeaders, authorization: `Bearer ${calmKey}` },
        body: calmRunBody,
      });
      const text = await res.text();
      if (!res.ok || !text.includes('"result":1')) throw new Error(`calm run_code failed ${res.status}: ${text.slice(0, 200)}`);
    };

    const targets: AttackerTarget[] = [];
    for (let n = 0; n < ATTACKER_WORKSPACES; n++) targets.push(await prepareAttacker(origin, upstream.origin, n));

    await timeCalm(calmCall, 100); // warm-up
    const rest = summarise(await timeCalm(calmCall, CALM_CALLS));
    await timeCalm(calmRun, 20); // warm-up: esbuild, the sandbox, the compiled program
    const restRunCode = summarise(await timeCalm(calmRun, CALM_CALLS));
    const attacks: FairnessAttackFigures[] = [];
    for (const attack of attackList(origin)) {
      const codes: Record<string, number> = {};
      const attackSamples: number[] = [];
      const inFlight = new Set<Promise<void>>();
      let turn = 0;
      const fire = () => {
        if (inFlight.size >= MAX_IN_FLIGHT) return;
        const target = targets[turn++ % (attack.workspaces ?? targets.length)]!;
        const t0 = performance.now();
        const request = attack
          .send(target)
          .catch((error: unknown) => `network: ${String(error)}`)
          .then((code) => {
            attackSamples.push(performance.now() - t0);
            codes[code] = (codes[code] ?? 0) + 1;
            inFlight.delete(request);
          });
        inFlight.add(request);
      };
      fire();
      const pacer = setInterval(fire, ATTACK_INTERVAL_MS);
      // Let the attack reach its pace before the calm tenant is timed.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const calmCallKind = attack.calm ?? "direct";
      const samples = await timeCalm(calmCallKind === "direct" ? calmCall : calmRun, CALM_CALLS);
      clearInterval(pacer);
      await Promise.all(inFlight);
      attacks.push({
        label: attack.label,
        calm: summarise(samples),
        calmCall: calmCallKind,
        attack: summarise(attackSamples),
        codes,
        expected: attack.expected,
      });
      // Each workspace's Code Mode allowance earns back before the next row.
      if (attack.workspaces) await new Promise((resolve) => setTimeout(resolve, ALLOWANCE_REFILL_MS));
    }
    return { rest, restRunCode, attacks };
  } finally {
    await gateway.stop();
    await upstream.close();
  }
}

async function timeCalm(call: () => Promise<void>, count: number): Promise<number[]> {
  const samples: number[] = [];
  for (let n = 0; n < count; n++) {
    const t0 = performance.now();
    await call();
    samples.push(performance.now() - t0);
  }
  return samples;
}

/** Each attack of issue 12's fairness list, as the outsider who controls its size would send it. */
function attackList(origin: string): Attack[] {
  const hook = (t: AttackerTarget, tool: string, path: string) => `${origin}/v1/workspaces/${t.ws}/tools/${t.tools[tool]}/hook${path}`;
  const codeOf = async (res: Response) => {
    const text = await res.text();
    if (res.ok) return text.includes('"isError":true') ? `isError ${/"code":"(\w+)"/.exec(text)?.[1] ?? "?"}` : "ok";
    try {
      return (JSON.parse(text) as { error: { code: string } }).error.code;
    } catch {
      return `HTTP ${res.status}`;
    }
  };
  const admin = (t: AttackerTarget, init: RequestInit = {}) => ({
    ...init,
    headers: { authorization: `Bearer ${t.admin}`, "content-type": "application/json", ...(init.headers as Record<string, string>) },
  });
  const callTool = (name: string, args: unknown) => async (t: AttackerTarget) => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: `hostile__${name}`, arguments: args } });
    return codeOf(
      await fetch(`${origin}/mcp`, { method: "POST", headers: { ...mcpHeaders, authorization: `Bearer ${t.clientKey}` }, body }),
    );
  };
  const runCode = (code: (n: number) => string) => {
    let n = 0;
    return async (t: AttackerTarget) => {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "run_code", arguments: { code: code(n++) } },
      });
      return codeOf(
        await fetch(`${origin}/mcp`, { method: "POST", headers: { ...mcpHeaders, authorization: `Bearer ${t.clientKey}` }, body }),
      );
    };
  };
  let saveCounter = 0;
  return [
    {
      label: "2  compile a draft of 40,000 nested brackets",
      expected: ["compile_failed"],
      send: async (t) => codeOf(await fetch(hook(t, "evil_input_pattern", "/compile"), admin(t, { method: "POST", body: "{}" }))),
    },
    {
      label: "3a call a tool whose input pattern is ^(a+)+$",
      expected: ["isError schema_too_complex", "isError invalid_arguments"],
      send: callTool("evil_input_pattern", { text: evilPatternSubject(4000) }),
    },
    {
      label: "3b call a tool with a 22-level anyOf chain",
      expected: ["isError schema_too_complex"],
      send: callTool("anyof_chain", { value: "x" }),
    },
    {
      label: "3c uniqueItems over 30,000 items",
      expected: ["isError schema_too_complex"],
      send: callTool("unique_items", uniqueItemsArguments()),
    },
    {
      label: "4  hook types of a doubling $ref graph",
      expected: ["ok"],
      send: async (t) => {
        const res = await fetch(`${origin}/v1/workspaces/${t.ws}/tools/${t.tools.exponential_refs}/hook/types`, admin(t));
        await res.text();
        return res.ok ? "ok" : codeOf(res);
      },
    },
    {
      label: "5  diff two unrelated 12,000-line versions",
      expected: ["ok"],
      send: async (t) => {
        const res = await fetch(hook(t, "anyof_chain", `/versions/${t.diffVersion}/diff`), admin(t));
        const text = await res.text();
        return res.ok && text.includes('"tooLarge":true') ? "ok" : `HTTP ${res.status}`;
      },
    },
    {
      // Not an attack: an ordinary draft save at the same pace, to tell what any
      // save costs (a version row written) from what formatting would add.
      label: "-  control: save an ordinary draft",
      expected: ["ok"],
      send: async (t) => {
        const url = hook(t, "unique_items", "/draft");
        const draft = (await (await fetch(url, admin(t))).json()) as { etag: string };
        const source = `export default defineToolAdapter({ apiVersion: "rayrun.hooks/v1", before: () => ({ action: "continue" }) });\n// ${saveCounter++}\n`;
        const res = await fetch(url, admin(t, { method: "PUT", body: JSON.stringify({ source }), headers: { "if-match": draft.etag } }));
        return res.ok ? "ok" : codeOf(res);
      },
    },
    {
      label: "6  save a draft that is exponential to format",
      expected: ["ok"],
      send: async (t) => {
        const url = hook(t, "unique_items", "/draft");
        const draft = (await (await fetch(url, admin(t))).json()) as { etag: string };
        const source = `${prettierPathologicalSource()}// ${saveCounter++}\n`;
        const res = await fetch(url, admin(t, { method: "PUT", body: JSON.stringify({ source }), headers: { "if-match": draft.etag } }));
        return res.ok ? "ok" : codeOf(res);
      },
    },
    {
      label: "26.4 run_code spinning to the work budget",
      expected: ["isError timeout", "isError code_mode_busy"],
      workspaces: 1,
      send: runCode(() => "while (true) {}"),
    },
    {
      label: "26.4 run_code of one 95 KiB program",
      expected: ["ok", "isError code_mode_busy"],
      workspaces: 1,
      send: runCode(() => bigProgram(0)),
    },
    {
      label: "26.4 run_code of a new 95 KiB program",
      expected: ["ok", "isError code_mode_busy"],
      workspaces: 1,
      send: runCode((n) => bigProgram(n + 1)),
    },
    {
      label: "26.5 two tenants hold sandboxes on slow tools",
      expected: ["ok"],
      workspaces: 2,
      calm: "run_code",
      send: runCode(() => "for (let i = 0; i < 3; i++) await tools.slow__wait({ ms: 1000 });\nreturn 'held';"),
    },
  ];
}

async function prepareAttacker(origin: string, upstreamOrigin: string, n: number): Promise<AttackerTarget> {
  const tenant = await createTenant(origin, `attacker-${n}`);
  const tools = {
    ...(await tenant.addService("hostile", `${upstreamOrigin}/fixtures/hostile-schemas/mcp`)),
    ...(await tenant.addService("refs", `${upstreamOrigin}/fixtures/exponential-refs/mcp`)),
    ...(await tenant.addService("slow", `${upstreamOrigin}/fixtures/slow/bench-${n}/mcp`)),
  };
  // `both`: the same key sends the direct-call attacks and runs programs.
  await tenant.request("PATCH", `/v1/workspaces/${tenant.ws}/profiles/${tenant.defaultProfileId}`, { discovery: "both" });
  const save = async (tool: string, source: string) => {
    const url = `/v1/workspaces/${tenant.ws}/tools/${tools[tool]}/hook/draft`;
    const draft = await tenant.request("GET", url);
    return (await tenant.request("PUT", url, { source }, { "if-match": draft.etag })).versionId as string;
  };
  await save("evil_input_pattern", nestedBracketsSource());
  const { before, after } = unrelatedVersions();
  await save("anyof_chain", before);
  const diffVersion = await save("anyof_chain", after);
  return { admin: tenant.admin, ws: tenant.ws, clientKey: await tenant.clientKey(), tools, diffVersion };
}

async function createTenant(origin: string, name: string) {
  const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}, auth = admin) => {
    const res = await fetch(`${origin}${path}`, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${auth}`, ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  let admin = bootstrap;
  const created = await request("POST", "/v1/workspaces", { name });
  admin = created.adminKey.secret as string;
  const ws = created.workspace.id as string;
  return {
    ws,
    admin,
    defaultProfileId: created.defaultProfileId as string,
    request,
    /** Connects an upstream and returns its tools' uids by upstream name. */
    async addService(slug: string, url: string): Promise<Record<string, string>> {
      const service = await request("POST", `/v1/workspaces/${ws}/services`, { slug, url });
      const listed = (await request("GET", `/v1/workspaces/${ws}/tools?serviceId=${service.service.id}`)) as {
        tools: { uid: string; name: string }[];
      };
      return Object.fromEntries(listed.tools.map((tool) => [tool.name, tool.uid]));
    },
    async clientKey(): Promise<string> {
      const key = await request("POST", `/v1/workspaces/${ws}/keys`, {
        name: "agent",
        scopes: ["tools:call"],
        profileId: created.defaultProfileId,
      });
      return key.secret as string;
    },
  };
}

export function printFairness(result: FairnessBench): void {
  console.log(
    `\nFairness (issues 12, 26): another workspace's tools/call (${CALM_CALLS} sequential calls per row) while one workspace sends an attack request every ${ATTACK_INTERVAL_MS} ms (at most ${MAX_IN_FLIGHT} in flight)`,
  );
  console.log("                                                 calm p50 calm p99  p50/at rest  attack p50  attack answers");
  console.log(`  at rest                                       ${fmt(result.rest.p50)}  ${fmt(result.rest.p99)}`);
  console.log(`  at rest, run_code of \`return 1\`               ${fmt(result.restRunCode.p50)}  ${fmt(result.restRunCode.p99)}`);
  const restOf = (attack: FairnessAttackFigures) => (attack.calmCall === "direct" ? result.rest : result.restRunCode);
  for (const attack of result.attacks) {
    const answers = Object.entries(attack.codes)
      .map(([code, count]) => `${count} ${code}`)
      .join(", ");
    const unexpected = Object.keys(attack.codes).some((code) => !attack.expected.includes(code));
    console.log(
      `  ${attack.label.padEnd(45)} ${fmt(attack.calm.p50)}  ${fmt(attack.calm.p99)}   ${ratio(attack.calm.p50, restOf(attack).p50)}     ${fmt(attack.attack.p50)}   ${answers}${unexpected ? `  (EXPECTED ONLY ${attack.expected.join(" / ")})` : ""}`,
    );
  }
  const worst = Math.max(
    ...result.attacks.filter((attack) => !attack.label.startsWith("-")).map((attack) => attack.calm.p50 / restOf(attack).p50),
  );
  console.log(`  worst p50 under attack / at rest: ${worst.toFixed(2)}× (target ≤ 1.5×)`);
}
