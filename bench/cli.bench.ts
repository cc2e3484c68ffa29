// `npm run bench -- cli` (and part of the full run): the `rayrun` CLI (issue 14).
// - Start-up: `rayrun --version` ÷ `node -e 0`, both on the machine's Node, alternating (target ≤ 2×), and one
//   `rayrun hooks run` event (a PreToolUse against a one-rule file), which Claude Code starts for every tool call
//   twice over. Both run the `rayrun` bin, as `npx rayrun` does.
// - `rayrun hooks apply` of 10 hooks against a real gateway: the first run and a run with nothing changed, each
//   with its wall time and the API requests it made (target for the no-change run: at most 2 requests per hook),
//   counted by a loopback proxy between the CLI and the gateway.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request, seedWorkspace, startGateway } from "../test/node/gateway.ts";
import { balancedOrders, fmt, ratio, summarise, type Figures } from "./lib.ts";

const root = join(import.meta.dirname, "..");
const bin = join(root, "cli/bin/rayrun.js");
const STARTUP_ROUNDS = Number(process.env.BENCH_CLI_STARTUP_ROUNDS ?? 40);
const HOOKS = 10;
const STARTUP_TARGET = 2;
const REQUESTS_PER_HOOK_TARGET = 2;

export interface CliBench {
  startup: Record<"node" | "rayrun" | "hooksRun", Figures>;
  apply: Record<"first" | "unchanged", { ms: number; requests: number; byRoute: Record<string, number> }>;
  hooks: number;
}

function timed(args: string[], input?: string, env?: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  const run = spawnSync(process.execPath, args, { encoding: "utf8", input, env });
  const elapsed = performance.now() - t0;
  if (run.status !== 0) throw new Error(`node ${args.join(" ")}: ${run.status} ${run.stderr}`);
  return elapsed;
}

function startup(): CliBench["startup"] {
  const folder = mkdtempSync(join(tmpdir(), "rayrun-bench-hooks-run-"));
  try {
    writeFileSync(
      join(folder, "gateway-hooks.toml"),
      `[[hooks.PreToolUse]]\nmatcher = "^Bash$"\nhandlers = [{ type = "deny", reason = "no shell" }]\n`,
    );
    const event = JSON.stringify({
      hook_event_name: "PreToolUse",
      session_id: "bench",
      cwd: folder,
      tool_name: "Read",
      tool_input: { file_path: "a" },
    });
    const calls = {
      node: () => timed(["-e", "0"]),
      rayrun: () => timed([bin, "--version"]),
      // The session's project folder is kept in the user's state folder: here, the bench's own.
      hooksRun: () =>
        timed([bin, "hooks", "run"], event, { ...process.env, CLAUDE_PROJECT_DIR: undefined, XDG_STATE_HOME: join(folder, ".state") }),
    };
    const names = Object.keys(calls) as (keyof typeof calls)[];
    const samples: Record<keyof typeof calls, number[]> = { node: [], rayrun: [], hooksRun: [] };
    const orders = balancedOrders(names.length);
    for (let round = 0; round < STARTUP_ROUNDS; round++) {
      for (const index of orders[round % orders.length]!) samples[names[index]!].push(calls[names[index]!]());
    }
    return { node: summarise(samples.node), rayrun: summarise(samples.rayrun), hooksRun: summarise(samples.hooksRun) };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** A loopback proxy in front of the gateway that counts the requests passing through it, by method and path shape. */
async function countingProxy(target: string) {
  const counted: string[] = [];
  const server = createServer((incoming, outgoing) => {
    const path = (incoming.url ?? "/").split("?")[0]!;
    // Ids (`ws_…`, `tool_…`, `rev_…`) become `{id}`, so requests group by route.
    counted.push(`${incoming.method} ${path.replace(/\/[a-z]+_[\w-]+/g, "/{id}")}`);
    const upstream = httpRequest(`${target}${incoming.url}`, { method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    upstream.on("error", () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    origin: `http://127.0.0.1:${port}`,
    take: () => counted.splice(0),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A trivial adapter and one test case per tool: what a small team's hooks folder looks like. */
function writeHooks(dir: string, tools: string[]): void {
  for (const tool of tools) {
    writeFileSync(
      join(dir, `${tool}.hook.ts`),
      `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    return { action: "continue", arguments: { value: String(args.value ?? "").trim() } };
  },
});
`,
    );
    writeFileSync(
      join(dir, `${tool}.tests.json`),
      JSON.stringify([{ name: "trims", stage: "before", arguments: { value: " a " }, expect: { outcome: "continue" } }]),
    );
  }
}

export async function benchCli(): Promise<CliBench> {
  const built = spawnSync(process.execPath, [join(root, "cli/build.ts")], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(built.stderr);
  const startupFigures = startup();

  const gateway = await startGateway({ fixtures: true });
  const folder = mkdtempSync(join(tmpdir(), "rayrun-bench-hooks-"));
  const proxy = await countingProxy(gateway.origin);
  try {
    const workspace = await seedWorkspace(gateway, "cli bench");
    await request(gateway.origin, "POST", `/v1/workspaces/${workspace.ws}/services`, workspace.adminKey, {
      slug: "many",
      url: `${gateway.upstream.origin}/fixtures/tools/${HOOKS}/mcp`,
    });
    writeHooks(
      folder,
      Array.from({ length: HOOKS }, (_, i) => `many__tool_${String(i).padStart(5, "0")}`),
    );
    // Spawned, not spawnSync: the counting proxy runs in this process and must keep serving.
    const apply = async () => {
      const t0 = performance.now();
      const child = spawn(process.execPath, [bin, "hooks", "apply", folder, "--json"], {
        env: { ...process.env, RAYRUN_API_URL: proxy.origin, RAYRUN_API_KEY: workspace.adminKey, RAYRUN_WORKSPACE: workspace.ws },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => (stdout += chunk));
      child.stderr.on("data", (chunk) => (stderr += chunk));
      const status = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      const ms = performance.now() - t0;
      if (status !== 0) throw new Error(`rayrun hooks apply: ${status} ${stdout} ${stderr}`);
      const byRoute: Record<string, number> = {};
      const requests = proxy.take();
      for (const route of requests) byRoute[route] = (byRoute[route] ?? 0) + 1;
      return { ms, requests: requests.length, byRoute, report: JSON.parse(stdout) as { hooks: { status: string }[] } };
    };
    const first = await apply();
    const unchanged = await apply();
    if (!unchanged.report.hooks.every((hook) => hook.status === "unchanged")) throw new Error("the second apply changed something");
    return {
      startup: startupFigures,
      apply: {
        first: { ms: first.ms, requests: first.requests, byRoute: first.byRoute },
        unchanged: { ms: unchanged.ms, requests: unchanged.requests, byRoute: unchanged.byRoute },
      },
      hooks: HOOKS,
    };
  } finally {
    await proxy.close();
    await gateway.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

export function printCli(bench: CliBench): void {
  const { startup: s, apply, hooks } = bench;
  console.log("\nrayrun CLI (milliseconds)");
  console.log(`  start-up                          p50      p99`);
  console.log(`    node -e 0                   ${fmt(s.node.p50)}  ${fmt(s.node.p99)}`);
  const slower = s.rayrun.p50 / s.node.p50;
  console.log(
    `    rayrun --version            ${fmt(s.rayrun.p50)}  ${fmt(s.rayrun.p99)}  ${ratio(s.rayrun.p50, s.node.p50)} node (p50; target ≤ ${STARTUP_TARGET}×${slower <= STARTUP_TARGET ? "" : ": misses it"})`,
  );
  console.log(
    `    rayrun hooks run (one event) ${fmt(s.hooksRun.p50)}  ${fmt(s.hooksRun.p99)}  ${ratio(s.hooksRun.p50, s.node.p50)} node (p50; per agent tool call, twice)`,
  );
  console.log(`  hooks apply of ${hooks} hooks          time  requests`);
  for (const [label, run] of [
    ["first run", apply.first],
    ["nothing changed", apply.unchanged],
  ] as const) {
    console.log(
      `    ${label.padEnd(25)} ${fmt(run.ms)}  ${String(run.requests).padStart(8)}  (${(run.requests / hooks).toFixed(1)} per hook)`,
    );
    for (const [route, count] of Object.entries(run.byRoute).sort()) console.log(`        ${String(count).padStart(3)}  ${route}`);
  }
  // The one tool listing serves the whole folder; every other request is one hook's.
  const hookRequests = Object.entries(apply.unchanged.byRoute).reduce(
    (sum, [route, count]) => sum + (route.includes("/hook") ? count : 0),
    0,
  );
  const perHook = hookRequests / hooks;
  console.log(
    `    nothing changed: ${perHook.toFixed(1)} requests per hook + ${apply.unchanged.requests - hookRequests} for the folder (target ≤ ${REQUESTS_PER_HOOK_TARGET} per hook${perHook <= REQUESTS_PER_HOOK_TARGET ? "" : ": misses it"})`,
  );
}
