import { utf8Length } from "./compiler.inputs.ts";
import { FORMAT_MAX_BYTES, FORMAT_SHAPE } from "./compiler.limits.ts";
import { findShapeProblem } from "./compiler.shape.ts";

/**
 * Prettier's standalone build with its TypeScript parser, loaded on first use:
 * about 1.2 MB of JavaScript that only draft saves need, so the Worker does
 * not evaluate it at startup.
 */
let prettier: Promise<{ format: (source: string) => Promise<string> }> | undefined;

function loadPrettier() {
  prettier ??= Promise.all([import("prettier/standalone"), import("prettier/plugins/typescript"), import("prettier/plugins/estree")]).then(
    ([standalone, typescript, estree]) => ({
      format: (source: string) => standalone.format(source, { parser: "typescript", plugins: [typescript, estree] }),
    }),
    (error: unknown) => {
      prettier = undefined;
      throw error;
    },
  );
  return prettier;
}

/** Why a draft was stored as written: over the size bound, over the shape bound, or not parseable. */
export type FormatSkipped = "too_large" | "too_nested" | "unparsable";

export type FormatOutcome = { source: string; formatted: true } | { source: string; formatted: false; skipped: FormatSkipped };

/**
 * Formats hook source for storage as a draft. Prettier is synchronous and
 * cannot be interrupted, so it only runs below a size and shape bound
 * (FORMAT_MAX_BYTES, FORMAT_SHAPE: pathological nesting costs it seconds).
 * Source over them, or that does not parse (work in progress), is returned as
 * written with the reason: saving must never fail because of formatting.
 */
export async function formatHookSource(source: string): Promise<FormatOutcome> {
  if (utf8Length(source) > FORMAT_MAX_BYTES) return { source, formatted: false, skipped: "too_large" };
  if (findShapeProblem(source, FORMAT_SHAPE)) return { source, formatted: false, skipped: "too_nested" };
  const { format } = await loadPrettier();
  try {
    return { source: await format(source), formatted: true };
  } catch {
    // Syntax errors and parser stack overflows alike: keep the author's text.
    return { source, formatted: false, skipped: "unparsable" };
  }
}
