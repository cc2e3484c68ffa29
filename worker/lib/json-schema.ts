import { format, Validator, type Schema, type SchemaDraft } from "@cfworker/json-schema";
import { compileLinearPattern, matchLinear, PatternBudgetExceeded, type LinearPattern } from "../../cli/src/rules/core/linear-regex.ts";
import { WeightedLru } from "./lru.ts";
import { analyseSchema, VALUE_LIMITS, type SchemaAnalysis, type SchemaBoundBreach } from "./schema-bounds.ts";

export interface SchemaViolation {
  pointer: string;
  message: string;
}

/** `breach`: the schema, or this value against it, is past a bound: nothing was decided, the caller fails closed. */
export type SchemaCheck = { valid: true } | { valid: false; violations: SchemaViolation[] } | { valid: false; breach: SchemaBoundBreach };

const MAX_VIOLATIONS = 10;

/** Upstream schemas name their draft in `$schema` (the MCP SDK emits draft-07); default to 2020-12. */
function draftOf(schema: Schema): SchemaDraft {
  const declared = typeof schema.$schema === "string" ? schema.$schema : "";
  if (declared.includes("draft-04")) return "4";
  if (declared.includes("draft-07") || declared.includes("draft-06")) return "7";
  if (declared.includes("2019-09")) return "2019-09";
  return "2020-12";
}

interface CompiledSchema {
  validator: Validator;
  analysis: SchemaAnalysis;
}

/**
 * Compiled validators keyed by the schema's own JSON: the same definition is
 * validated on every call, and a changed definition is simply a new key.
 * Upstreams choose the schemas, so the cache is bounded by count and by the
 * schemas' characters (a compiled validator's memory follows its schema's
 * size): 500 validators, 8 Mi characters, twice one service's 4 MiB of tool
 * definitions.
 */
export const validatorCache = new WeightedLru<CompiledSchema>(500, 8 * 1024 * 1024);
/**
 * The same validators by schema object: a catalog snapshot passes the same
 * objects on every call, so most calls skip serialising the schema for the key.
 */
const bySchemaObject = new WeakMap<Schema, CompiledSchema>();

function compiledFor(schema: Schema): CompiledSchema {
  const known = bySchemaObject.get(schema);
  if (known) return known;
  const key = JSON.stringify(schema);
  let compiled = validatorCache.get(key);
  if (!compiled) {
    const analysis = analyseSchema(schema);
    // A schema past a static bound is never handed to the validator.
    const validator = new Validator(analysis.breach ? true : withLinearPatterns(schema), draftOf(schema), false);
    compiled = { validator, analysis };
    validatorCache.set(key, compiled, key.length);
  }
  bySchemaObject.set(schema, compiled);
  return compiled;
}

/** The static bounds a schema breaks, if any (cached with its validator). */
export function schemaBreach(schema: Record<string, unknown>): SchemaBoundBreach | null {
  return compiledFor(schema as Schema).analysis.breach;
}

export function checkAgainstSchema(schema: Record<string, unknown>, value: unknown): SchemaCheck {
  const { validator, analysis } = compiledFor(schema as Schema);
  if (analysis.breach) return { valid: false, breach: analysis.breach };
  const valueBreach = checkValueBounds(analysis, value);
  if (valueBreach === "too_deep") {
    return { valid: false, violations: [{ pointer: "", message: `nests objects and arrays deeper than ${MAX_VALUE_NESTING} levels` }] };
  }
  if (valueBreach) return { valid: false, breach: valueBreach };
  patternBudget.remaining = VALUE_LIMITS.patternWork;
  let result: ReturnType<Validator["validate"]>;
  try {
    result = validator.validate(value);
  } catch (error) {
    if (!(error instanceof PatternBudgetExceeded)) throw error;
    return {
      valid: false,
      breach: {
        bound: "pattern_work",
        limit: VALUE_LIMITS.patternWork,
        message: `matching this value's strings against the schema's patterns takes more than ${VALUE_LIMITS.patternWork} steps`,
      },
    };
  }
  if (result.valid) return { valid: true };
  // cfworker reports the failing keyword at every level; the deepest entries say what is actually wrong.
  const violations = result.errors
    .filter((error) => error.keyword !== "properties" && error.keyword !== "items" && error.keyword !== "$ref")
    .slice(0, MAX_VIOLATIONS)
    .map((error) => ({ pointer: error.instanceLocation.replace(/^#/, ""), message: error.error }));
  return { valid: false, violations: violations.length ? violations : [{ pointer: "", message: "does not match the schema" }] };
}

/**
 * Objects and arrays nested deeper than this make a value invalid, whatever
 * its schema says: the validator, hooks and upstreams all recurse on nesting
 * (many JSON parsers stop near a thousand levels), and no tool's arguments or
 * result need this many.
 */
export const MAX_VALUE_NESTING = 64;

/**
 * Bounds that depend on the value: its nesting ("too_deep", an invalid value
 * rather than a bound of the schema), the total work (values × the schema's
 * applications per value), and the array length `uniqueItems` compares
 * pairwise. Counted with an explicit stack, before the validator starts.
 */
function checkValueBounds(analysis: SchemaAnalysis, value: unknown): SchemaBoundBreach | "too_deep" | null {
  const valueBudget = Math.floor(VALUE_LIMITS.validationWork / Math.max(1, analysis.applicationsPerValue));
  let values = 0;
  const stack: unknown[] = [value];
  // The nesting of each value on the stack, kept beside it.
  const depths: number[] = [0];
  while (stack.length > 0) {
    const next = stack.pop();
    const depth = depths.pop()!;
    if (++values > valueBudget) {
      return {
        bound: "validation_work",
        limit: VALUE_LIMITS.validationWork,
        message: `checking this value (over ${valueBudget} values, each against up to ${analysis.applicationsPerValue} subschemas) would take more than ${VALUE_LIMITS.validationWork} steps`,
      };
    }
    if (typeof next !== "object" || next === null) continue;
    if (depth >= MAX_VALUE_NESTING) return "too_deep";
    if (Array.isArray(next)) {
      if (analysis.usesUniqueItems && next.length > VALUE_LIMITS.uniqueItems) {
        return {
          bound: "unique_items",
          limit: VALUE_LIMITS.uniqueItems,
          message: `the schema uses uniqueItems and the value has an array of ${next.length} items (at most ${VALUE_LIMITS.uniqueItems})`,
        };
      }
      for (const item of next) {
        stack.push(item);
        depths.push(depth + 1);
      }
    } else {
      for (const item of Object.values(next)) {
        stack.push(item);
        depths.push(depth + 1);
      }
    }
  }
  return null;
}

/** What the current validation may still spend on patterns; reset by every check (validation is synchronous). */
const patternBudget = { remaining: 0 };
const LINEAR_FORMAT = "rayrun-linear-pattern:";
const DATA_KEYWORDS: ReadonlySet<string> = new Set(["const", "enum", "default", "examples", "required", "dependentRequired"]);

/**
 * The schema with every `pattern` moved to a format the linear matcher answers,
 * so the validator never runs a backtracking RegExp on a string. A node that has
 * a `format` of its own keeps it and gets the pattern through `allOf`.
 */
function withLinearPatterns(schema: Schema): Schema {
  const copy = structuredClone(schema);
  const stack: unknown[] = [copy];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    const record = node as Record<string, unknown>;
    for (const [key, child] of Object.entries(record)) if (!DATA_KEYWORDS.has(key)) stack.push(child);
    if (typeof record.pattern !== "string") continue;
    const linear = { format: LINEAR_FORMAT + record.pattern };
    delete record.pattern;
    if (record.format === undefined) record.format = linear.format;
    else record.allOf = [...(Array.isArray(record.allOf) ? record.allOf : []), linear];
  }
  return copy;
}

/**
 * Compiled `pattern`s, by source: 500 of them, 4 Mi characters of source in all (a compiled pattern's memory
 * follows its length), so any pattern one service's 4 MiB of definitions can hold is kept.
 */
export const linearPatternCache = new WeightedLru<(subject: string) => boolean>(500, 4 * 1024 * 1024);

/**
 * cfworker looks formats up by name in its exported `format` table; names under
 * LINEAR_FORMAT resolve, through the table's prototype, to the linear matcher
 * for the rest of the name. Nothing is registered per schema, so nothing has to
 * be removed when a validator leaves the cache.
 */
Object.setPrototypeOf(
  format,
  new Proxy(Object.prototype, {
    get(target, name, receiver) {
      if (typeof name !== "string" || !name.startsWith(LINEAR_FORMAT)) return Reflect.get(target, name, receiver);
      const source = name.slice(LINEAR_FORMAT.length);
      let matcher = linearPatternCache.get(source);
      if (!matcher) {
        const compiled = compileLinearPattern(source);
        // Only an upstream naming this format itself gets here with a pattern the analysis would refuse: it matches nothing.
        const pattern: LinearPattern | null = compiled.ok ? compiled.pattern : null;
        matcher = (subject) => pattern !== null && matchLinear(pattern, subject, patternBudget);
        linearPatternCache.set(source, matcher, source.length);
      }
      return matcher;
    },
  }),
);
