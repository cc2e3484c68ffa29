/**
 * Hostile inputs of issue 12's items 2, 4, 5 and 6, each observed to stall the
 * Worker before its bound existed. The tests here and the fairness check
 * (another workspace's latency while one runs an attack) share them.
 */
import type { UpstreamToolDefinition } from "./compiler.types.ts";

/** A draft of `depth` nested brackets: esbuild-wasm's Go runtime overflows its stack and dies (item 2). */
export function nestedBracketsSource(depth = 40_000): string {
  return `export default ${"(".repeat(depth)}1${")".repeat(depth)};\n`;
}

/** A draft of `depth` chained conditionals, the same attack without a single bracket (item 2). */
export function chainedTernariesSource(depth = 20_000): string {
  return `export default ${"a?b:".repeat(depth)}c;\n`;
}

/**
 * A tool whose input schema's reference graph doubles at each of `levels`
 * levels: every `#/properties/lN` refers to `#/properties/lN+1` twice. Inlined,
 * its declarations are 2^levels copies (item 4).
 */
export function exponentialRefTool(levels = 25): UpstreamToolDefinition {
  const properties: Record<string, unknown> = { [`l${levels}`]: { type: "string" } };
  for (let level = 0; level < levels; level++) {
    const next = `#/properties/l${level + 1}`;
    properties[`l${level}`] = { type: "object", properties: { left: { $ref: next }, right: { $ref: next } } };
  }
  return { name: "exponential_refs", inputSchema: { type: "object", properties } };
}

/**
 * Two versions of `lines` lines each with no line in common (48 KiB each, so
 * both save, unformatted): a diff quadratic in the lines (item 5).
 */
export function unrelatedVersions(lines = 12_000): { before: string; after: string } {
  return { before: "//a\n".repeat(lines), after: "//b\n".repeat(lines) };
}

/**
 * 20 calls each passing an arrow as their last argument, nested: about 200
 * bytes that take Prettier 6.5 s (it is exponential in this nesting, item 6).
 */
export function prettierPathologicalSource(depth = 20): string {
  return `export default ${"f(() => ".repeat(depth)}1${")".repeat(depth)};\n`;
}
