import { DEFAULT_LIMITS } from "./isolate.limits.ts";
import { runStage, type StageRequest } from "./isolate.run.ts";
import type { StageContextInput } from "./isolate.types.ts";

/**
 * Isolate figures for `npm run bench` (the lead wires it in): latency of a
 * trivial and a realistic stage, the realistic transform as plain V8 code in
 * the same Worker, peak wasm memory, and how far `while(true){}` overshoots
 * the work budget.
 */

const CONTEXT: StageContextInput = {
  calledAt: "2026-01-01T00:00:00.000Z",
  requestId: "bench",
  workspaceUid: "ws",
  connectionId: "conn",
  toolUid: "tool",
  toolName: "search",
  config: { prefix: "rr:", minScore: 50 },
};

const TRIVIAL = `var __rayrun = (() => ({ default: defineToolAdapter({ apiVersion: "rayrun.hooks/v1",
  before({ arguments: a }) { return { action: "continue", arguments: a }; } }) }))();`;

/** The realistic transform, written once and used both as hook source and as plain V8 code. */
function realisticAfter({
  result,
  arguments: args,
  context,
}: {
  result: { items: { id: number; title: string; score: number; tags: string[] }[] };
  arguments: { query: string };
  context: { config: { prefix: string; minScore: number } };
}) {
  const items = result.items
    .filter((item) => item.score >= context.config.minScore && !item.tags.includes("hidden"))
    .map((item) => ({ id: context.config.prefix + item.id, title: item.title.trim().slice(0, 40), score: item.score }));
  return { action: "return" as const, result: { query: args.query.toLowerCase(), count: items.length, items } };
}

const REALISTIC = `var __rayrun = (() => ({ default: defineToolAdapter({ apiVersion: "rayrun.hooks/v1",
  before({ arguments: a, context }) { return { action: "continue", arguments: { ...a, q: context.config.prefix + a.query, limit: Math.min(a.limit ?? 10, 100) } }; },
  after: ${realisticAfter.toString().replace(/^function realisticAfter/, "function")} }) }))();`;

const RESULT = {
  items: Array.from({ length: 100 }, (_, i) => ({
    id: i,
    title: `  Item number ${i} with a fairly long title  `,
    score: (i * 37) % 100,
    tags: i % 7 === 0 ? ["hidden"] : ["a", "b"],
  })),
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * The Workers clock is coarse (it may only advance between I/O), so single
 * runs cannot be timed: runs are timed in blocks and each block yields the
 * mean of its runs; percentiles are taken over the blocks.
 */
const BLOCK = 10;

async function timeRuns(request: StageRequest, runs: number): Promise<{ p50: number; p99: number; peakWasmBytes: number }> {
  const times: number[] = [];
  let peakWasmBytes = 0;
  for (let block = 0; block < Math.max(1, Math.floor(runs / BLOCK)); block++) {
    const started = Date.now();
    for (let i = 0; i < BLOCK; i++) {
      const run = await runStage(request);
      if (run.outcome === "error") throw new Error(`bench stage failed: ${JSON.stringify(run.error)}`);
      peakWasmBytes = Math.max(peakWasmBytes, run.usage.wasmBytes);
    }
    await scheduler.wait(0); // an I/O turn lets the clock advance
    times.push((Date.now() - started) / BLOCK);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), peakWasmBytes };
}

export interface IsolateBench {
  trivialBefore: { p50Ms: number; p99Ms: number };
  realisticBeforeAfter: { p50Ms: number; p99Ms: number };
  plainV8: { p50Ms: number; p99Ms: number };
  /** Realistic after-stage p50 in QuickJS divided by the same transform's p50 in V8. */
  quickjsToV8Ratio: number;
  peakWasmBytes: number;
  /** `while(true){}`: polls used / work budget (1.0 = stopped exactly at the budget). */
  budgetOvershootRatio: number;
  whileTrueMs: number;
}

export async function benchIsolate(runs = 500): Promise<IsolateBench> {
  const warm = Math.min(50, runs);
  const trivialRequest: StageRequest = { bundle: TRIVIAL, stage: "before", input: { arguments: { query: "x" } }, context: CONTEXT };
  const beforeRequest: StageRequest = {
    bundle: REALISTIC,
    stage: "before",
    input: { arguments: { query: "Hello", limit: 500 } },
    context: CONTEXT,
  };
  const afterRequest: StageRequest = {
    bundle: REALISTIC,
    stage: "after",
    input: { arguments: { query: "Hello" }, result: RESULT },
    context: CONTEXT,
  };

  await timeRuns(trivialRequest, warm);
  const trivial = await timeRuns(trivialRequest, runs);
  await timeRuns(beforeRequest, warm);
  const before = await timeRuns(beforeRequest, runs);
  const after = await timeRuns(afterRequest, runs);

  // Same transform in V8, including the JSON copy in and out the isolate also pays.
  const v8Times: number[] = [];
  const v8Block = BLOCK * 10;
  for (let block = 0; block < Math.max(1, Math.floor(runs / BLOCK)); block++) {
    const started = Date.now();
    for (let i = 0; i < v8Block; i++) {
      const input = JSON.parse(JSON.stringify({ result: RESULT, arguments: { query: "Hello" } }));
      JSON.parse(JSON.stringify(realisticAfter({ ...input, context: { config: { prefix: "rr:", minScore: 50 } } })));
    }
    await scheduler.wait(0);
    v8Times.push((Date.now() - started) / v8Block);
  }
  v8Times.sort((a, b) => a - b);
  const v8 = { p50: percentile(v8Times, 50), p99: percentile(v8Times, 99) };

  const loopStarted = Date.now();
  const loop = await runStage({ ...trivialRequest, bundle: TRIVIAL.replace("return { action", "while (true) {} return { action") });
  await scheduler.wait(0);
  const whileTrueMs = Date.now() - loopStarted;
  if (loop.error?.code !== "timeout") throw new Error(`while(true) did not time out: ${JSON.stringify(loop.error)}`);

  const realistic = { p50: (before.p50 + after.p50) / 2, p99: Math.max(before.p99, after.p99) };
  return {
    trivialBefore: { p50Ms: trivial.p50, p99Ms: trivial.p99 },
    realisticBeforeAfter: { p50Ms: realistic.p50, p99Ms: realistic.p99 },
    plainV8: { p50Ms: v8.p50, p99Ms: v8.p99 },
    quickjsToV8Ratio: after.p50 / Math.max(v8.p50, 0.001),
    peakWasmBytes: Math.max(trivial.peakWasmBytes, before.peakWasmBytes, after.peakWasmBytes, loop.usage.wasmBytes),
    budgetOvershootRatio: loop.usage.polls / DEFAULT_LIMITS.workBudgetPolls,
    whileTrueMs,
  };
}
