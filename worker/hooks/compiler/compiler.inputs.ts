import type { Diagnostic } from "./compiler.diagnostics.ts";
import { COMPILE_SHAPE, CONFIG_MAX_BYTES, SOURCE_MAX_BYTES } from "./compiler.limits.ts";
import { findShapeProblem, type ShapeProblem } from "./compiler.shape.ts";

const encoder = new TextEncoder();

/** UTF-8 length, without encoding strings that are certainly over `limit`. */
function utf8LengthUpTo(text: string, limit: number): number {
  // Each UTF-16 code unit is at least one UTF-8 byte, so a long string is over without counting.
  if (text.length > limit) return limit + 1;
  return encoder.encode(text).byteLength;
}

/** Checked before anything parses the source: a 10 MiB draft never reaches esbuild. */
export function checkSourceSize(source: string): Diagnostic[] {
  if (utf8LengthUpTo(source, SOURCE_MAX_BYTES) <= SOURCE_MAX_BYTES) return [];
  return [{ code: "source_too_large", message: `the source is over ${SOURCE_MAX_BYTES} bytes (UTF-8)` }];
}

const SHAPE_MESSAGES: Record<ShapeProblem["kind"], (limit: number) => string> = {
  nesting: (limit) => `nesting (brackets, template literals, conditionals and arrow functions) goes deeper than ${limit} levels here`,
  arrow_nesting: (limit) => `arrow functions nest deeper than ${limit} levels here`,
  expression_tokens: (limit) => `this expression is longer than ${limit} tokens; split it into statements`,
};

/** Checked on the text before esbuild parses it: esbuild recurses on nesting and cannot be interrupted. */
export function checkSourceShape(source: string): Diagnostic[] {
  const problem = findShapeProblem(source, COMPILE_SHAPE);
  if (!problem) return [];
  return [{ code: "nesting_too_deep", message: SHAPE_MESSAGES[problem.kind](problem.limit), line: problem.line, column: problem.column }];
}

/** Config is deployed with the revision and handed to every stage: a small JSON object. */
export function checkConfig(config: unknown): Diagnostic[] {
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    return [{ code: "config_not_object", message: "config must be a JSON object" }];
  }
  let serialized: string;
  try {
    serialized = JSON.stringify(config);
  } catch {
    return [{ code: "config_not_object", message: "config must be a JSON object (it could not be serialized)" }];
  }
  if (utf8LengthUpTo(serialized, CONFIG_MAX_BYTES) > CONFIG_MAX_BYTES) {
    return [{ code: "config_too_large", message: `config is over ${CONFIG_MAX_BYTES} bytes as JSON` }];
  }
  return [];
}

export function utf8Length(text: string): number {
  return encoder.encode(text).byteLength;
}
