import { compileHook } from "./compiler.compile.ts";
import { resetEsbuild } from "./compiler.esbuild.ts";
import { SEARCH_TOOL } from "./compiler.fixtures.ts";

/**
 * A realistic hook of about `bytes` bytes: the seed's adapter plus as many
 * typed helper functions (string work, branching, object building) as fit.
 */
export function syntheticHook(bytes: number): string {
  const adapter = `
export default defineToolAdapter<{ query: string }, { items: unknown[] }>({
  apiVersion: "rayrun.hooks/v1",
  publicContract: {
    description: "Search public release notes",
    inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"], additionalProperties: false },
  },
  before({ arguments: args, context }) {
    context.log.info("Preparing search", { query: args.query });
    const prefix = typeof context.config.prefix === "string" ? context.config.prefix : "";
    return { action: "continue", arguments: { q: normalize0(prefix + args.query) } };
  },
  after({ result }) {
    return { action: "return", result: { items: result.items.slice(0, 50) } };
  },
});
`;
  const helper = (n: number) => `
function normalize${n}(input: string): string {
  const words = input.trim().split(/\\s+/).filter((word) => word.length > 0);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const word of words) {
    const lower = word.toLowerCase();
    if (seen.has(lower) || lower.length > 64) continue;
    seen.add(lower);
    out.push(lower === "and" || lower === "or" ? lower.toUpperCase() : lower);
  }
  return ${n === 0 ? 'out.join(" ")' : `normalize${n - 1}(out.join(" "))`};
}
`;
  let source = adapter;
  for (let n = 0; source.length + helper(n).length <= bytes; n++) source = helper(n) + source;
  return source;
}

export interface CompileTimings {
  sourceBytes: number;
  /** p50 of compiles each preceded by a fresh esbuild start (the first compile in an isolate). */
  coldMs: number;
  /** p50 of compiles with esbuild already running. */
  warmMs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function timeCompile(source: string): Promise<number> {
  const started = performance.now();
  const result = await compileHook({ source, config: { prefix: "notes:" }, upstreamDefinition: SEARCH_TOOL });
  const elapsed = performance.now() - started;
  if (!result.ok) throw new Error(`benchmark hook did not compile: ${JSON.stringify(result.diagnostics)}`);
  return elapsed;
}

async function timeHook(bytes: number, coldRuns: number, warmRuns: number): Promise<CompileTimings> {
  const source = syntheticHook(bytes);
  const cold: number[] = [];
  for (let run = 0; run < coldRuns; run++) {
    await resetEsbuild();
    cold.push(await timeCompile(source));
  }
  await timeCompile(source);
  const warm: number[] = [];
  for (let run = 0; run < warmRuns; run++) warm.push(await timeCompile(source));
  return { sourceBytes: new TextEncoder().encode(source).byteLength, coldMs: median(cold), warmMs: median(warm) };
}

/**
 * Cold and warm compile times (p50) of a 5 KiB and a 100 KiB hook. Measures
 * inside the calling Worker (workerd); Date/performance only advance across
 * I/O on deployed Workers, so run it locally.
 */
export async function benchCompile(options: { coldRuns?: number; warmRuns?: number } = {}) {
  const coldRuns = options.coldRuns ?? 5;
  const warmRuns = options.warmRuns ?? 21;
  return {
    hook5KiB: await timeHook(5 * 1024, coldRuns, warmRuns),
    hook100KiB: await timeHook(100 * 1024 - 512, coldRuns, warmRuns),
  };
}
