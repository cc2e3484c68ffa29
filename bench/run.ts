// `npm run bench`: every performance figure, each printed against a baseline measured in the same run.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { benchCallLog, printCallLog } from "./calllog.bench.ts";
import { benchCli, printCli } from "./cli.bench.ts";
import { benchCodeMode, printCodeMode } from "./codemode.bench.ts";
import { benchConsoleSize, printConsoleSize } from "./console-size.bench.ts";
import { benchFairness, printFairness } from "./fairness.bench.ts";
import { benchGateway } from "./gateway.bench.ts";
import { benchProxy, printProxy } from "./proxy.bench.ts";
import { quietEnv } from "./lib.ts";
import { benchRules, printRules } from "./rules.bench.ts";
import { benchAlias, printAlias } from "./alias.bench.ts";
import { benchLive, printLive } from "./live.bench.ts";

const root = join(import.meta.dirname, "..");

/** The parts measured outside workerd, in the order a full run takes them. */
const parts: Record<string, () => Promise<void>> = {
  "console-size": async () => printConsoleSize(benchConsoleSize()),
  // The gateway part prints each of its figures as it is measured: it takes many minutes.
  gateway: async () => void (await benchGateway()),
  fairness: async () => printFairness(await benchFairness()),
  proxy: async () => printProxy(await benchProxy()),
  cli: async () => printCli(await benchCli()),
  rules: async () => printRules(await benchRules()),
  codemode: async () => printCodeMode(await benchCodeMode()),
  alias: async () => printAlias(await benchAlias()),
  calllog: async () => printCallLog(await benchCallLog()),
  live: async () => printLive(await benchLive()),
};

// `npm run bench -- <part>` (one of the names above) runs only that part; no argument runs everything.
const only = process.argv[2];
if (only !== undefined) {
  const part = parts[only];
  if (!part) {
    console.error(`unknown bench part "${only}"; one of: ${Object.keys(parts).join(", ")}`);
    process.exit(2);
  }
  await part();
  process.exit(0);
}
for (const part of Object.values(parts)) await part();

const inside = spawnSync("npx", ["vitest", "run"], { cwd: root, env: { ...quietEnv, RAYRUN_BENCH: "1" }, encoding: "utf8" });
const figures = new Map<string, any>();
for (const line of `${inside.stdout}\n${inside.stderr}`.split("\n")) {
  const match = /BENCH (\{.*\})\s*$/.exec(line);
  if (match) {
    const { name, figures: value } = JSON.parse(match[1]!);
    figures.set(name, value);
  }
}
if (inside.status !== 0 || figures.size === 0) {
  console.error(inside.stdout.slice(-4000), inside.stderr.slice(-4000));
  process.exit(1);
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const isolate = figures.get("isolate");
if (isolate) {
  console.log("\nHook isolate (QuickJS, inside workerd)");
  console.log(
    `  trivial before stage        p50 ${ms(isolate.trivialBefore.p50Ms)}  p99 ${ms(isolate.trivialBefore.p99Ms)}  (target ≤ 1 ms p50)`,
  );
  console.log(
    `  realistic before+after      p50 ${ms(isolate.realisticBeforeAfter.p50Ms)}  p99 ${ms(isolate.realisticBeforeAfter.p99Ms)}  (target ≤ 2 ms p50)`,
  );
  console.log(`  same transform in plain V8  p50 ${ms(isolate.plainV8.p50Ms)}  → QuickJS/V8 ${isolate.quickjsToV8Ratio.toFixed(1)}×`);
  console.log(`  peak wasm memory            ${(isolate.peakWasmBytes / 1048576).toFixed(1)} MiB`);
  console.log(`  while(true){} stopped at    ${isolate.budgetOvershootRatio.toFixed(3)}× the work budget (${ms(isolate.whileTrueMs)})`);
}
const compiler = figures.get("compiler");
if (compiler) {
  console.log("\nHook compiler (esbuild-wasm + checks + QuickJS evaluation, inside workerd)");
  for (const [label, t] of [
    ["5 KiB hook", compiler.hook5KiB],
    ["100 KiB hook", compiler.hook100KiB],
  ] as const) {
    console.log(
      `  ${label.padEnd(13)} cold p50 ${ms(t.coldMs)}  warm p50 ${ms(t.warmMs)}  (warm/cold ${(t.warmMs / t.coldMs).toFixed(2)}×)`,
    );
  }
  console.log("  target: warm compile of a 5 KiB hook ≤ 30 ms p50");
}
const lifecycle = figures.get("lifecycle");
if (lifecycle) {
  console.log("\nHook lifecycle (through the API, inside workerd)");
  console.log(`  draft save                 p50 ${ms(lifecycle.draftSaveP50Ms)} over ${lifecycle.saves} saves`);
  console.log(
    `  list ${lifecycle.versions} versions        p50 ${ms(lifecycle.versionPageP50Ms)} per page of ${lifecycle.pageSize}, ${ms(lifecycle.versionListTotalMs)} for all (${(lifecycle.versionListTotalMs / lifecycle.versions).toFixed(3)} ms per version)`,
  );
}
const leases = figures.get("leases");
if (leases) {
  console.log("\nLeases (inside workerd, real clock and Durable Object)");
  console.log(
    `  deploy request to answer, another isolate renewing its lease   p50 ${ms(leases.deployWithOtherHolder.p50Ms)}  max ${ms(leases.deployWithOtherHolder.maxMs)}  over ${leases.deploys} deploys (target ≤ ${ms(leases.targetMs)}: a lease, the margin and one round trip)`,
  );
  console.log(
    `  deploy request to answer, no other isolate holding one          p50 ${ms(leases.deployAlone.p50Ms)}  max ${ms(leases.deployAlone.maxMs)}  (the deploying isolate gives its own lease up)`,
  );
  console.log(`  one lease grant (a Durable Object round trip)                   p50 ${ms(leases.grantRoundTripP50Ms)}`);
}
const callLog = figures.get("callLog");
if (callLog) {
  console.log("\nCall-log ingestion (the queue consumer's D1 writes, batches of 100, inside workerd)");
  for (const [label, f] of [
    ["no hook (1 call row)", callLog.plain],
    ["hooked (+2 stage rows)", callLog.hooked],
    ["one INSERT per call", callLog.perCallInsert],
  ] as const) {
    console.log(
      `  ${label.padEnd(24)} ${Math.round(f.callsPerSecond).toString().padStart(7)} calls/s  ${f.statementsPer1000.toFixed(1).padStart(7)} D1 statements per 1,000 calls`,
    );
  }
  console.log(
    `  batching: ${(callLog.plain.callsPerSecond / callLog.perCallInsert.callsPerSecond).toFixed(1)}× the calls per second of one INSERT per call (target ≤ 20 statements per 1,000 calls)`,
  );
}
